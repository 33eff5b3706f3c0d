import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { createRegistryClient, CursorExpiredError, RegistryError } from '../src/index.js'

/** A registry answering every call with `status` and `body`. */
async function answering(status: number, body: string, headers: Record<string, string> = {}) {
  const server = createServer((_request, response) =>
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body),
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

const caught = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a rejection')
    },
    (error: unknown) => error,
  )

describe('RegistryError', () => {
  it('is built from an options object and recognised by its brand', () => {
    const error = new RegistryError({
      message: 'no brand',
      code: 'brand_not_found',
      url: 'https://registry.example/api/brands/resolve?domain=x.example',
      statusCode: 404,
      responseBody: '{"error":"no brand","code":"brand_not_found"}',
      data: { error: 'no brand', code: 'brand_not_found' },
    })
    expect(error).toMatchObject({
      name: 'RegistryError',
      code: 'brand_not_found',
      statusCode: 404,
      isRetryable: false,
    })
    expect(RegistryError.is(error)).toBe(true)
    expect(RegistryError.is({ [Symbol.for('@adwire/registry-client/RegistryError')]: true })).toBe(true)
    expect(RegistryError.is(new Error('x'))).toBe(false)
    expect(CursorExpiredError.is(error)).toBe(false)
    expect(error.status).toBe(404)
  })

  it('is retryable without a response, on 408, 429 and 5xx, unless told otherwise', () => {
    const at = (statusCode?: number) =>
      new RegistryError({ message: 'x', code: 'x', url: 'u', ...(statusCode ? { statusCode } : {}) })
        .isRetryable
    expect([at(), at(408), at(429), at(500), at(503)]).toEqual([true, true, true, true, true])
    expect([at(400), at(401), at(404), at(409), at(410)]).toEqual([false, false, false, false, false])
    expect(
      new RegistryError({ message: 'x', code: 'x', url: 'u', statusCode: 500, isRetryable: false })
        .isRetryable,
    ).toBe(false)
  })

  it('reads the official Error { error: code, message } and a RateLimitError with Retry-After', async () => {
    const official = await answering(
      404,
      '{"error":"brand_not_found","message":"no brand.json at nothing.example","domain":"nothing.example"}',
    )
    const limited = await answering(429, '{"error":"rate_limited","message":"slow down","retryAfter":7}', {
      'retry-after': '7',
    })
    const headerOnly = await answering(429, '{"error":"rate_limited","message":"slow down"}', {
      'retry-after': '3',
    })
    try {
      expect(
        await caught(createRegistryClient({ baseUrl: official.url }).resolveBrand('nothing.example')),
      ).toMatchObject({
        code: 'brand_not_found',
        message: 'no brand.json at nothing.example',
        statusCode: 404,
        retryAfter: undefined,
      })
      expect(
        await caught(
          createRegistryClient({ baseUrl: limited.url }).request('POST', '/api/brands/save', { body: {} }),
        ),
      ).toMatchObject({ code: 'rate_limited', message: 'slow down', retryAfter: 7, isRetryable: true })
      expect(
        await caught(createRegistryClient({ baseUrl: headerOnly.url }).resolveBrand('x.example')),
      ).toMatchObject({ code: 'rate_limited', retryAfter: 3 })
    } finally {
      await Promise.all([official.close(), limited.close(), headerOnly.close()])
    }
  })

  it('carries the URL, status, body and the code of the older error shape from a real answer', async () => {
    const registry = await answering(
      404,
      '{"error":"no brand.json at nothing.example","code":"brand_not_found"}',
    )
    try {
      const error = await caught(
        createRegistryClient({ baseUrl: registry.url }).request('GET', '/api/brands/resolve', {
          query: { domain: 'nothing.example' },
        }),
      )
      expect(RegistryError.is(error)).toBe(true)
      expect(error).toMatchObject({
        code: 'brand_not_found',
        message: 'no brand.json at nothing.example',
        url: `${registry.url}/api/brands/resolve?domain=nothing.example`,
        statusCode: 404,
        responseBody: '{"error":"no brand.json at nothing.example","code":"brand_not_found"}',
        data: { error: 'no brand.json at nothing.example', code: 'brand_not_found' },
        isRetryable: false,
      })
    } finally {
      await registry.close()
    }
  })

  it('has no status and is retryable when nothing answered', async () => {
    const registry = await answering(200, '{}')
    await registry.close()
    const error = await caught(
      createRegistryClient({ baseUrl: registry.url }).request('GET', '/api/brands/resolve'),
    )
    expect(error).toMatchObject({ code: 'network_error', statusCode: undefined, isRetryable: true })
    expect((error as RegistryError).url).toBe(`${registry.url}/api/brands/resolve`)
  })
})
