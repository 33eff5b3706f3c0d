import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { privateKeys, readVector } from '../test/conformance/signing-vectors.js'
import { SignatureError } from './errors.js'
import { MemoryReplayStore } from './replay-memory.js'
import { staticRevocation } from './revocation.js'
import { buildSignatureBase } from './signature-base.js'
import type { AdcpJwk, HttpMessage, KeyResolver } from './types.js'
import { signWebhook, verifyWebhook } from './webhook.js'

const VERSION = '3.1.19'
const keys = privateKeys(VERSION, 'webhook-signing')
const publicOf = ({ d: _d, ...jwk }: AdcpJwk): AdcpJwk => ({ ...jwk, key_ops: ['verify'] })
const jwks = { keys: [...keys.values()].map(publicOf) }
const NOW = 1776520800
const message: HttpMessage = {
  method: 'POST',
  url: 'https://buyer.example.com/adcp/webhook/create_media_buy/agent_123/op_abc',
  headers: { 'Content-Type': 'application/json' },
  body: '{"idempotency_key":"whk_01HW9D3H8FZP2N6R8T0V4X6Z9B","task_id":"task_456","status":"completed"}',
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    if (SignatureError.is(error)) return error.code
    throw error
  }
  return 'resolved'
}

describe('signWebhook', () => {
  it('reproduces the vectors byte for byte given their nonce and clock (Ed25519 is deterministic)', async () => {
    for (const file of [
      'positive/001-basic-post.json',
      'positive/004-default-port-stripped.json',
      'positive/008-request-signing-key-reuse.json',
    ]) {
      const vector = readVector(VERSION, 'webhook-signing', file)
      const input = vector.request.headers['Signature-Input']!
      const nonce = /nonce="([^"]+)"/.exec(input)![1]!
      const kid = /keyid="([^"]+)"/.exec(input)![1]!
      const {
        Signature: _s,
        'Signature-Input': _i,
        'Content-Digest': _d,
        ...headers
      } = vector.request.headers
      const signed = await signWebhook(
        { ...vector.request, headers },
        { key: keys.get(kid)!, now: vector.reference_now, nonce },
      )
      expect(signed.headers['signature-input']).toBe(input)
      expect(signed.headers['signature']).toBe(vector.request.headers['Signature'])
      expect(signed.headers['content-digest']).toBe(vector.request.headers['Content-Digest'])
      expect(buildSignatureBase(signed)).toBe(vector.expected_signature_base)
    }
  })

  it.each([...keys.keys()])('round-trips with %s', async (kid) => {
    const signed = await signWebhook(message, { key: keys.get(kid)!, now: NOW })
    const verifying = verifyWebhook(signed, {
      keys: jwks,
      now: NOW + 10,
      replayStore: new MemoryReplayStore(),
    })
    if (kid === 'test-response-purpose-2026')
      expect(await codeOf(verifying)).toBe('webhook_signature_key_purpose_invalid')
    else
      await expect(verifying).resolves.toMatchObject({
        keyid: kid,
        label: 'sig1',
        created: NOW,
        expires: NOW + 300,
      })
  })

  it('uses a fresh 16-byte nonce on every call', async () => {
    const key = keys.get('test-es256-webhook-2026')!
    const nonces = new Set<string>()
    for (let index = 0; index < 20; index += 1) {
      const signed = await signWebhook(message, { key, now: NOW })
      nonces.add(/nonce="([A-Za-z0-9_-]{22})"/.exec(signed.headers['signature-input']!)![1]!)
    }
    expect(nonces.size).toBe(20)
  })

  it('covers exactly the five components, replaces stale signature headers and keeps the body', async () => {
    const signed = await signWebhook(
      {
        ...message,
        headers: { ...message.headers, Signature: 'sig1=:old:', 'content-digest': 'sha-256=:old:' },
      },
      { key: keys.get('test-ed25519-webhook-2026')!, now: NOW, expiresIn: 60 },
    )
    expect(signed.headers['signature-input']).toMatch(
      /^sig1=\("@method" "@target-uri" "@authority" "content-type" "content-digest"\);created=1776520800;expires=1776520860;nonce="[A-Za-z0-9_-]{22}";keyid="test-ed25519-webhook-2026";alg="ed25519";tag="adcp\/webhook-signing\/v1"$/,
    )
    expect(signed.headers['signature']).toMatch(/^sig1=:[A-Za-z0-9_-]{86}:$/)
    expect(signed.body).toBe(message.body)
  })

  it('refuses what it cannot sign', async () => {
    const key = keys.get('test-ed25519-webhook-2026')!
    expect(await codeOf(signWebhook({ ...message, headers: {} }, { key }))).toBe(
      'webhook_signature_components_incomplete',
    )
    expect(await codeOf(signWebhook(message, { key, expiresIn: 301 }))).toBe(
      'webhook_signature_window_invalid',
    )
    expect(await codeOf(signWebhook(message, { key, nonce: 'short' }))).toBe(
      'webhook_signature_header_malformed',
    )
    expect(await codeOf(signWebhook({ ...message, url: 'https://[::1/p' }, { key }))).toBe(
      'webhook_target_uri_malformed',
    )
    expect(
      await codeOf(
        signWebhook({ ...message, headers: { ...message.headers, host: 'other.example' } }, { key }),
      ),
    ).toBe('webhook_target_uri_malformed')
    expect(await codeOf(signWebhook(message, { key: publicOf(key) }))).toBe('key_source_invalid')
    expect(await codeOf(signWebhook(message, { key: { ...key, crv: 'P-256' } }))).toBe('key_source_invalid')
  })
})

describe('verifyWebhook', () => {
  const key = keys.get('test-ed25519-webhook-2026')!
  const sign = (overrides: Partial<HttpMessage> = {}) =>
    signWebhook({ ...message, ...overrides }, { key, now: NOW })

  it('accepts WHATWG Headers, byte bodies and a matching Host header', async () => {
    const signed = await sign()
    const headers = new Headers({ ...signed.headers, host: 'BUYER.example.com:443' })
    const body = new TextEncoder().encode(signed.body as string)
    await expect(
      verifyWebhook({ ...signed, headers, body }, { keys: jwks, now: NOW }),
    ).resolves.toMatchObject({ keyid: key.kid })
  })

  it('rejects a Host or :authority that is not the signed authority (cross-vhost replay)', async () => {
    const signed = await sign()
    for (const extra of [
      { host: 'other.example' },
      { ':authority': 'other.example' },
      { host: 'buyer.example.com', ':authority': 'x.example' },
    ]) {
      expect(
        await codeOf(
          verifyWebhook({ ...signed, headers: { ...signed.headers, ...extra } }, { keys: jwks, now: NOW }),
        ),
      ).toBe('webhook_target_uri_malformed')
    }
  })

  it('checks revocation and the per-keyid cap before any cryptography', async () => {
    const signed = await sign()
    const broken = { ...signed, headers: { ...signed.headers, signature: `sig1=:${'A'.repeat(86)}:` } }
    const revocation = staticRevocation([key.kid])
    expect(await codeOf(verifyWebhook(broken, { keys: jwks, now: NOW, revocation }))).toBe(
      'webhook_signature_key_revoked',
    )
    const replayStore = new MemoryReplayStore()
    replayStore.fill(key.kid, 3, NOW + 360)
    expect(
      await codeOf(verifyWebhook(broken, { keys: jwks, now: NOW, replayStore, maxNoncesPerKey: 3 })),
    ).toBe('webhook_signature_rate_abuse')
    expect(
      await codeOf(verifyWebhook(broken, { keys: jwks, now: NOW, revocation: { revokedKids: [] } })),
    ).toBe('webhook_signature_invalid')
  })

  it('accepts nonces up to 128 characters and refuses longer ones before any cryptography or replay write', async () => {
    const longest = 'N'.repeat(128)
    const accepted = await signWebhook(message, { key, now: NOW, nonce: longest })
    await expect(verifyWebhook(accepted, { keys: jwks, now: NOW })).resolves.toMatchObject({ nonce: longest })
    expect(await codeOf(signWebhook(message, { key, now: NOW, nonce: 'N'.repeat(8192) }))).toBe(
      'webhook_signature_header_malformed',
    )
    const signed = await sign()
    const replayStore = new MemoryReplayStore()
    for (const length of [131, 8192]) {
      const input = signed.headers['signature-input']!.replace(
        /nonce="[^"]+"/,
        `nonce="${'N'.repeat(length)}"`,
      )
      const error = await verifyWebhook(
        { ...signed, headers: { ...signed.headers, 'signature-input': input } },
        { keys: jwks, now: NOW, replayStore },
      ).catch((caught: unknown) => caught as SignatureError)
      expect(error).toMatchObject({ code: 'webhook_signature_header_malformed', step: 2 })
      expect((error as SignatureError).message).toMatch(/22 to 128 characters/)
    }
    expect(replayStore.liveCount(key.kid, NOW)).toBe(0)
  })

  it('burns the nonce before rejecting a body with duplicate keys', async () => {
    const signed = await sign({ body: '{"status":"completed","status":"failed"}' })
    const replayStore = new MemoryReplayStore()
    expect(await codeOf(verifyWebhook(signed, { keys: jwks, now: NOW, replayStore }))).toBe(
      'webhook_body_malformed',
    )
    expect(await codeOf(verifyWebhook(signed, { keys: jwks, now: NOW, replayStore }))).toBe(
      'webhook_signature_replayed',
    )
    await expect(verifyWebhook(signed, { keys: jwks, now: NOW, checkBody: false })).resolves.toBeDefined()
  })

  it('remembers nonces until expires + 60', async () => {
    const signed = await sign()
    const replayStore = new MemoryReplayStore()
    await verifyWebhook(signed, { keys: jwks, now: NOW, replayStore })
    expect(
      await replayStore.seen(
        key.kid,
        /nonce="([^"]+)"/.exec(signed.headers['signature-input']!)![1]!,
        NOW + 359,
      ),
    ).toBe(true)
    expect(replayStore.liveCount(key.kid, NOW + 360)).toBe(0)
  })

  it('uses a key resolver and reports the signer it names', async () => {
    const resolver: KeyResolver = {
      resolve: async (keyid, context) => {
        expect(context).toEqual({ profile: 'webhook', now: NOW, created: NOW })
        return keyid === key.kid ? { jwk: publicOf(key), signer: 'https://seller.example/mcp' } : undefined
      },
    }
    await expect(verifyWebhook(await sign(), { keys: resolver, now: NOW })).resolves.toMatchObject({
      signer: 'https://seller.example/mcp',
    })
    const failing: KeyResolver = { resolve: async () => Promise.reject(new Error('network down')) }
    expect(await codeOf(verifyWebhook(await sign(), { keys: failing, now: NOW }))).toBe(
      'key_source_unavailable',
    )
    const brokenList = { check: async () => Promise.reject(new Error('list unreachable')) }
    expect(await codeOf(verifyWebhook(await sign(), { keys: jwks, now: NOW, revocation: brokenList }))).toBe(
      'webhook_signature_revocation_stale',
    )
  })

  it('rejects keys without use "sig", without key_ops "verify" or without adcp_use', async () => {
    const signed = await sign()
    const { use: _use, ...noUse } = publicOf(key)
    const { adcp_use: _adcpUse, ...noPurpose } = publicOf(key)
    for (const jwk of [
      noUse,
      noPurpose,
      { ...publicOf(key), key_ops: undefined },
      { ...publicOf(key), alg: 'ES256' },
    ]) {
      expect(await codeOf(verifyWebhook(signed, { keys: { keys: [jwk as AdcpJwk] }, now: NOW }))).toBe(
        'webhook_signature_key_purpose_invalid',
      )
    }
  })

  it('never throws anything but SignatureError on arbitrary messages', async () => {
    const signed = await sign()
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          { method: fc.anything(), url: fc.anything(), headers: fc.anything(), body: fc.anything() },
          { requiredKeys: [] },
        ),
        fc.boolean(),
        async (shape, keepHeaders) => {
          const message = { ...(keepHeaders ? signed : {}), ...shape } as unknown as HttpMessage
          for (const attempt of [
            () => verifyWebhook(message, { keys: jwks, now: NOW }),
            () => signWebhook(message, { key, now: NOW }),
          ]) {
            try {
              await attempt()
            } catch (error) {
              expect(SignatureError.is(error), String(error)).toBe(true)
            }
          }
        },
      ),
      { numRuns: 300 },
    )
    for (const nothing of [undefined, null]) {
      expect(await codeOf(verifyWebhook(nothing as unknown as HttpMessage, { keys: jwks }))).toBe(
        'webhook_signature_header_malformed',
      )
    }
  })

  it('never throws anything but SignatureError on arbitrary headers', async () => {
    const signed = await sign()
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          input: fc.string(),
          signature: fc.string(),
          digest: fc.string(),
          type: fc.string(),
          url: fc.string(),
        }),
        async ({ input, signature, digest, type, url }) => {
          const headers = {
            'signature-input': input,
            signature,
            'content-digest': digest,
            'content-type': type,
          }
          for (const candidate of [
            { ...signed, headers },
            { ...signed, url },
            {
              ...signed,
              headers: { ...signed.headers, 'signature-input': signed.headers['signature-input'] + input },
            },
          ]) {
            try {
              await verifyWebhook(candidate, { keys: jwks, now: NOW })
            } catch (error) {
              expect(SignatureError.is(error), String(error)).toBe(true)
            }
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})
