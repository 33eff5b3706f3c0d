import { describe, expect, it } from 'vitest'
import { bearerHeaders, SignatureError, verifyBearerWebhook } from './index.js'
import { constantTimeEqual } from './internal.js'

const token = 'tok_0123456789abcdefghijklmnopqrstuv'

describe('Bearer (deprecated)', () => {
  it('accepts the registered token, in any header-name case', async () => {
    await expect(verifyBearerWebhook(bearerHeaders(token), token)).resolves.toBeUndefined()
    await expect(verifyBearerWebhook({ authorization: `bearer ${token}` }, token)).resolves.toBeUndefined()
    await expect(
      verifyBearerWebhook(new Headers({ Authorization: `Bearer ${token}` }), [
        'old-token-old-token-old-token-xx',
        token,
      ]),
    ).resolves.toBeUndefined()
  })

  it.each([
    ['no header', {}],
    ['another token', { Authorization: `Bearer ${token}x` }],
    ['a prefix of it', { Authorization: `Bearer ${token.slice(0, 10)}` }],
    ['another scheme', { Authorization: `Basic ${token}` }],
    ['an empty bearer', { Authorization: 'Bearer ' }],
  ])('rejects %s with webhook_bearer_invalid', async (_what, headers) => {
    const error = await verifyBearerWebhook(headers, token).catch((caught: unknown) => caught)
    expect(SignatureError.is(error) && error.code).toBe('webhook_bearer_invalid')
  })

  it('refuses to emit a short token', () => {
    expect(() => bearerHeaders('short')).toThrowError(
      expect.objectContaining({ code: 'webhook_credential_invalid' }),
    )
  })
})

describe('constantTimeEqual', () => {
  it('compares strings and bytes of any length', async () => {
    expect(await constantTimeEqual('abc', 'abc')).toBe(true)
    expect(await constantTimeEqual('abc', 'abd')).toBe(false)
    expect(await constantTimeEqual('abc', 'abcd')).toBe(false)
    expect(await constantTimeEqual(new TextEncoder().encode('é'), 'é')).toBe(true)
  })
})
