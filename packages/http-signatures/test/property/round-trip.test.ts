import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  generateSigningKey,
  SignatureError,
  signRequest,
  signWebhook,
  verifyRequest,
  verifyWebhook,
  type GeneratedSigningKey,
  type HttpMessage,
  type SignedMessage,
} from '../../src/index.js'
import { canonicalizeTargetUri } from '../../src/internal.js'

// Round trips over random keys, methods, URLs and bodies, and single-byte changes to what a signature covers.
const NOW = 1_776_520_800
let keys: GeneratedSigningKey[] = []

beforeAll(async () => {
  keys = await Promise.all([
    generateSigningKey({ alg: 'ed25519', kid: 'prop-ed-1' }),
    generateSigningKey({ alg: 'ed25519', kid: 'prop-ed-2' }),
    generateSigningKey({ alg: 'es256', kid: 'prop-es-1' }),
    generateSigningKey({ alg: 'es256', kid: 'prop-es-2' }),
  ])
})

const label = fc.stringMatching(/^[a-z][a-z0-9]{0,10}$/)
const host = fc.oneof(
  fc.array(label, { minLength: 1, maxLength: 3 }).map((labels) => `${labels.join('.')}.example`),
  fc.integer({ min: 1, max: 0xffff }).map((n) => `[2001:db8::${n.toString(16)}]`),
)
const port = fc.oneof(
  fc.constant(''),
  fc.constant(':443'),
  fc.integer({ min: 1, max: 65535 }).map((n) => `:${n}`),
)
const pathSegment = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9._~-]{1,12}$/),
  fc.constantFrom('%7e', '%2F', '%2f', '%41', 'caf%C3%A9', 'a%20b', '%3A'),
)
const query = fc.oneof(
  fc.constant(''),
  fc.constant('?'),
  fc.stringMatching(/^\?[a-z]=[0-9]{1,3}(&[a-z]=[0-9a-z]{1,3}){0,3}$/),
)
const url = fc
  .tuple(host, port, fc.array(pathSegment, { maxLength: 4 }), query)
  .map(([h, p, segments, q]) => `https://${h}${p}/${segments.join('/')}${q}`)
const method = fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE')
const body = fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value) ?? 'null')
const message = fc.record({ method, url, body, key: fc.nat(3) })

const publicJwks = () => ({ keys: keys.map((key) => key.publicJwk) })

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'accepted'
  } catch (error) {
    if (SignatureError.is(error)) return error.code
    throw error
  }
}

const verifyWebhookCode = (signed: HttpMessage) =>
  codeOf(verifyWebhook(signed, { keys: publicJwks(), now: NOW }))

function changeOneByte(text: string, index: number): string {
  const position = index % text.length
  const code = text.charCodeAt(position)
  const replacement = String.fromCharCode(code === 0x7a ? 0x61 : code < 0x20 || code > 0x7e ? 0x41 : code + 1)
  return text.slice(0, position) + replacement + text.slice(position + 1)
}

const withHeader = (signed: SignedMessage, name: string, value: string): HttpMessage => ({
  ...signed,
  headers: { ...(signed.headers as Record<string, string>), [name]: value },
})

describe('webhook profile: random messages', () => {
  const build = async (input: { method: string; url: string; body: string; key: number }) =>
    signWebhook(
      {
        method: input.method,
        url: input.url,
        headers: { 'content-type': 'application/json' },
        body: input.body,
      },
      { key: keys[input.key]!.privateJwk, now: NOW },
    )

  it('sign then verify accepts, with the signing keyid', async () => {
    await fc.assert(
      fc.asyncProperty(message, async (input) => {
        const signed = await build(input)
        const verified = await verifyWebhook(signed, { keys: publicJwks(), now: NOW })
        expect(verified.keyid).toBe(keys[input.key]!.publicJwk.kid)
      }),
      { numRuns: 150 },
    )
  })

  it('any single-byte change to the body is a digest mismatch', async () => {
    await fc.assert(
      fc.asyncProperty(message, fc.nat(), async (input, index) => {
        const signed = await build(input)
        const changed = { ...signed, body: changeOneByte(input.body, index) }
        expect(await verifyWebhookCode(changed)).toBe('webhook_signature_digest_mismatch')
      }),
      { numRuns: 150 },
    )
  })

  it('a change to the URL is rejected exactly when it changes the canonical target', async () => {
    await fc.assert(
      fc.asyncProperty(message, fc.nat(), async (input, index) => {
        const signed = await build(input)
        const start = input.url.indexOf('/', 'https://'.length)
        const position = start + (index % (input.url.length - start))
        const changedUrl = changeOneByte(input.url, position)
        const before = canonicalizeTargetUri(input.url)
        let after: string | undefined
        try {
          after = canonicalizeTargetUri(changedUrl).targetUri
        } catch {
          after = undefined
        }
        const code = await verifyWebhookCode({ ...signed, url: changedUrl })
        if (after === before.targetUri) expect(code).toBe('accepted')
        else if (after === undefined) expect(code).toBe('webhook_target_uri_malformed')
        else expect(code).toBe('webhook_signature_invalid')
      }),
      { numRuns: 150 },
    )
  })

  it('a change to a covered header or to the signature bytes is rejected', async () => {
    await fc.assert(
      fc.asyncProperty(message, fc.nat(63), async (input, byte) => {
        const signed = await build(input)
        const headers = signed.headers as Record<string, string>
        expect(await verifyWebhookCode(withHeader(signed, 'content-type', 'application/jsoN'))).toBe(
          'webhook_signature_invalid',
        )
        expect(await verifyWebhookCode(withHeader(signed, 'content-type', 'text/json'))).toBe(
          'webhook_signature_invalid',
        )
        // The signature token is unpadded base64url between colons: flip one byte of what it decodes to.
        const token = /^sig1=:([A-Za-z0-9_-]+):$/.exec(headers.signature!)![1]!
        const bytes = Buffer.from(token, 'base64url')
        bytes[byte % bytes.length]! ^= 0x01
        const forged = withHeader(signed, 'signature', `sig1=:${bytes.toString('base64url')}:`)
        expect(await verifyWebhookCode(forged)).toBe('webhook_signature_invalid')
      }),
      { numRuns: 100 },
    )
  })
})

describe('request profile 3.2: random messages', () => {
  it('sign then verify accepts; a changed body is a digest mismatch', async () => {
    await fc.assert(
      fc.asyncProperty(message, fc.nat(), async (input, index) => {
        const signed = await signRequest(
          {
            method: input.method,
            url: input.url,
            headers: { 'content-type': 'application/json' },
            body: input.body,
          },
          { key: keys[input.key]!.privateJwk, now: NOW, profile: '3.2' },
        )
        const options = { keys: publicJwks(), now: NOW, profile: '3.2' as const }
        const verified = await verifyRequest(signed, options)
        expect(verified.status).toBe('verified')
        const changed = await codeOf(
          verifyRequest({ ...signed, body: changeOneByte(input.body, index) }, options).then((result) => {
            if (result.status === 'unverified') throw result.error
            return result
          }),
        )
        expect(changed).toBe('request_signature_digest_mismatch')
      }),
      { numRuns: 100 },
    )
  })
})
