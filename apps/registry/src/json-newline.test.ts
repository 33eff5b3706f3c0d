/**
 * Every JSON answer of the registry ends with a newline (service-kit's listener adds it, once): answers,
 * problem answers and the OpenAPI description.
 */
import { jsonAnswer } from '@adwire/service-kit/testing'
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

describe('JSON answers', () => {
  it('end with a newline: health, a resolve, errors and the OpenAPI description', async () => {
    expect(await jsonAnswer(test.registry.url, '/health')).toBe(200)
    expect(await jsonAnswer(test.registry.url, '/api/brands/resolve?domain=acme-outdoor.example')).toBe(200)
    expect(await jsonAnswer(test.registry.url, '/api/brands/resolve')).toBe(400)
    expect(await jsonAnswer(test.registry.url, '/api/no-such-route')).toBe(404)
    expect(await jsonAnswer(test.registry.url, '/openapi.json')).toBe(200)
    expect(
      await jsonAnswer(test.registry.url, '/api/brands/save', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{',
      }),
    ).toBeGreaterThanOrEqual(400)
  })
})
