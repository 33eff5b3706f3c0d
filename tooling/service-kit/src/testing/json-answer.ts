/** The newline check of the services' JSON answers (see `withJsonNewline`), for each app's json-newline test. */
import { expect } from 'vitest'

/**
 * Fetches `path` of the service at `url` and checks that the answer is JSON (`application/json` or
 * `application/*+json`) whose body ends with exactly one newline (see `withJsonNewline`); resolves with the
 * status.
 *
 * @example
 * expect(await jsonAnswer(service.url, '/health')).toBe(200)
 * expect(await jsonAnswer(service.url, '/mcp', { method: 'POST', headers, body })).toBeLessThan(500)
 */
export async function jsonAnswer(url: string, path: string, init?: RequestInit): Promise<number> {
  const response = await fetch(`${url}${path}`, init)
  expect(response.headers.get('content-type'), path).toMatch(/^application\/(.+\+)?json/)
  const text = await response.text()
  expect(text.endsWith('\n') && !text.endsWith('\n\n'), `${path}: …${text.slice(-40)}`).toBe(true)
  expect(() => JSON.parse(text), path).not.toThrow()
  return response.status
}
