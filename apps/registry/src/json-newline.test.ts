/**
 * Every JSON answer of the registry ends with a newline (service-kit's listener adds it, once): answers,
 * problem answers and the OpenAPI description.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestRegistry, type TestRegistry } from './testing/registry.js'

let test: TestRegistry
beforeAll(async () => {
  test = await startTestRegistry({ kind: 'sqlite' })
})
afterAll(async () => {
  await test?.registry.close()
  await test?.cleanup()
})

/** The answer's status; its body is JSON that ends with exactly one newline. */
async function jsonAnswer(path: string, init?: RequestInit): Promise<number> {
  const response = await fetch(`${test.registry.url}${path}`, init)
  expect(response.headers.get('content-type'), path).toMatch(/^application\/(.+\+)?json/)
  const text = await response.text()
  expect(text.endsWith('\n') && !text.endsWith('\n\n'), `${path}: …${text.slice(-40)}`).toBe(true)
  expect(() => JSON.parse(text), path).not.toThrow()
  return response.status
}

describe('JSON answers', () => {
  it('end with a newline: health, a resolve, errors and the OpenAPI description', async () => {
    expect(await jsonAnswer('/health')).toBe(200)
    expect(await jsonAnswer('/api/brands/resolve?domain=acme-outdoor.example')).toBe(200)
    expect(await jsonAnswer('/api/brands/resolve')).toBe(400)
    expect(await jsonAnswer('/api/no-such-route')).toBe(404)
    expect(await jsonAnswer('/openapi.json')).toBe(200)
    expect(
      await jsonAnswer('/api/brands/save', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{',
      }),
    ).toBeGreaterThanOrEqual(400)
  })
})
