import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { privateKeys, readVector } from '../test/conformance/signing-vectors.js'
import { SignatureError } from './errors.js'
import { MemoryReplayStore } from './replay-memory.js'
import { signRequest, verifyRequest, type VerifyRequestOptions } from './request.js'
import type { AdcpJwk, HttpMessage } from './types.js'

const keys = privateKeys('3.1.19', 'request-signing')
const publicOf = ({ d: _d, ...jwk }: AdcpJwk): AdcpJwk => ({ ...jwk, key_ops: ['verify'] })
const jwks = { keys: [...keys.values()].map(publicOf) }
const key = keys.get('test-ed25519-2026')!
const NOW = 1776520800
const message: HttpMessage = {
  method: 'POST',
  url: 'https://seller.example.com/adcp/create_media_buy',
  headers: { 'Content-Type': 'application/json' },
  body: '{"plan_id":"plan_001"}',
}
const base: VerifyRequestOptions = { keys: jwks, now: NOW, profile: '3.2' }

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    if (SignatureError.is(error)) return error.code
    throw error
  }
  return 'resolved'
}

describe('nonce length', () => {
  it('accepts a 128-character nonce and refuses a longer one (request_signature_header_malformed)', async () => {
    const signed = await signRequest(message, { key, now: NOW, nonce: 'N'.repeat(128) })
    await expect(verifyRequest(signed, base)).resolves.toMatchObject({ nonce: 'N'.repeat(128) })
    const input = signed.headers['signature-input']!.replace(/nonce="[^"]+"/, `nonce="${'N'.repeat(8192)}"`)
    expect(
      await codeOf(
        verifyRequest({ ...signed, headers: { ...signed.headers, 'signature-input': input } }, base),
      ),
    ).toBe('request_signature_header_malformed')
    expect(await codeOf(signRequest(message, { key, now: NOW, nonce: 'N'.repeat(132) }))).toBe(
      'request_signature_header_malformed',
    )
  })
})

describe('signRequest', () => {
  it('reproduces the 3.2 vector exactly (sf-binary signature, content-digest covered)', async () => {
    const vector = readVector(
      '3.2.0-beta.5',
      'request-signing',
      'profile-3.2/positive/001-post-with-content-digest.json',
    )
    const { Signature: _s, 'Signature-Input': _i, 'Content-Digest': _d, ...headers } = vector.request.headers
    const signed = await signRequest(
      { ...vector.request, headers },
      { key, now: NOW, nonce: 'KXYnfEfJ0PBRZXQyVXfVQA' },
    )
    expect(signed.headers['signature-input']).toBe(vector.request.headers['Signature-Input'])
    expect(signed.headers['signature']).toBe(vector.request.headers['Signature'])
    expect(signed.headers['content-digest']).toBe(vector.request.headers['Content-Digest'])
  })

  it('reproduces the 3.1 vectors exactly (base64url signature, digest optional)', async () => {
    for (const [file, coverContentDigest] of [
      ['positive/001-basic-post.json', false],
      ['positive/002-post-with-content-digest.json', true],
    ] as const) {
      const vector = readVector('3.1.19', 'request-signing', file)
      const {
        Signature: _s,
        'Signature-Input': _i,
        'Content-Digest': _d,
        ...headers
      } = vector.request.headers
      const signed = await signRequest(
        { ...vector.request, headers },
        { key, now: NOW, nonce: 'KXYnfEfJ0PBRZXQyVXfVQA', profile: '3.1', coverContentDigest },
      )
      expect(signed.headers['signature-input']).toBe(vector.request.headers['Signature-Input'])
      expect(signed.headers['signature']).toBe(vector.request.headers['Signature'])
    }
  })

  it.each(['3.1', '3.2'] as const)(
    'round-trips under %s with both algorithms, with and without a body',
    async (profile) => {
      for (const kid of ['test-ed25519-2026', 'test-es256-2026']) {
        for (const body of [message.body, undefined]) {
          const signed = await signRequest(
            { ...message, ...(body === undefined ? { method: 'GET', body } : {}) },
            { key: keys.get(kid)!, now: NOW, profile },
          )
          const result = await verifyRequest(signed, {
            ...base,
            profile,
            replayStore: new MemoryReplayStore(),
          })
          expect(result).toMatchObject({ status: 'verified', keyid: kid })
        }
      }
    },
  )

  it('will not leave a body unbound under 3.2', async () => {
    expect(await codeOf(signRequest(message, { key, coverContentDigest: false }))).toBe(
      'request_signature_components_incomplete',
    )
  })
})

describe('verifyRequest', () => {
  const capability = {
    required_for: ['create_media_buy'],
    warn_for: ['update_media_buy'],
    protocol_methods_required_for: ['tasks/cancel'],
  }

  it('accepts unsigned calls that need no signature or present another credential', async () => {
    const unsigned = { ...message, url: 'https://seller.example.com/adcp/get_products' }
    await expect(verifyRequest(unsigned, { ...base, capability })).resolves.toEqual({
      status: 'unsigned',
      operation: 'get_products',
    })
    await expect(verifyRequest(message, { ...base, capability, hasOtherCredential: true })).resolves.toEqual({
      status: 'unsigned',
      operation: 'create_media_buy',
    })
    expect(await codeOf(verifyRequest(message, { ...base, capability }))).toBe('request_signature_required')
  })

  it('matches MCP tools/call by tool name and other JSON-RPC methods by method, never across', async () => {
    const rpc = (method: string, params: object) => ({
      ...message,
      url: 'https://seller.example.com/mcp',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    })
    expect(
      await codeOf(
        verifyRequest(rpc('tools/call', { name: 'create_media_buy', arguments: {} }), {
          ...base,
          capability,
        }),
      ),
    ).toBe('request_signature_required')
    expect(await codeOf(verifyRequest(rpc('tasks/cancel', { taskId: 't' }), { ...base, capability }))).toBe(
      'request_signature_required',
    )
    await expect(
      verifyRequest(rpc('tools/call', { name: 'tasks/cancel' }), { ...base, capability }),
    ).resolves.toMatchObject({ status: 'unsigned' })
    await expect(verifyRequest(rpc('create_media_buy', {}), { ...base, capability })).resolves.toMatchObject({
      status: 'unsigned',
    })
    await expect(
      verifyRequest(message, { ...base, capability, operation: 'get_products' }),
    ).resolves.toMatchObject({ status: 'unsigned' })
  })

  it('requires a signature on webhook registrations with legacy authentication, bearer or not', async () => {
    const body = JSON.stringify({
      accounts: [
        { notification_configs: [{ url: 'https://b.example/h', authentication: { schemes: ['Bearer'] } }] },
      ],
    })
    const registration = { ...message, url: 'https://seller.example.com/adcp/sync_accounts', body }
    expect(await codeOf(verifyRequest(registration, { ...base, hasOtherCredential: true }))).toBe(
      'request_signature_required',
    )
  })

  it('never falls back to the other credential when the signature pair is broken', async () => {
    const signed = await signRequest(message, { key, now: NOW })
    const { 'signature-input': _input, ...withoutInput } = signed.headers
    const options = { ...base, hasOtherCredential: true, capability: { warn_for: ['create_media_buy'] } }
    expect(await codeOf(verifyRequest({ ...signed, headers: withoutInput }, options))).toBe(
      'request_signature_header_malformed',
    )
  })

  it('reports a failed signature on a warn_for operation as unverified when another credential is present', async () => {
    const signed = await signRequest(
      { ...message, url: 'https://seller.example.com/adcp/update_media_buy' },
      { key, now: NOW },
    )
    const tampered = { ...signed, body: '{"plan_id":"plan_002"}' }
    const result = await verifyRequest(tampered, { ...base, capability, hasOtherCredential: true })
    expect(result.status).toBe('unverified')
    expect(result.status === 'unverified' && result.error.code).toBe('request_signature_digest_mismatch')
    expect(await codeOf(verifyRequest(tampered, { ...base, capability }))).toBe(
      'request_signature_digest_mismatch',
    )
  })

  it('rejects a 3.1 base64url signature on a 3.2 endpoint and the reverse, without trying the other decoder', async () => {
    // A signature whose encoding uses the alphabet-specific characters (`-`/`_` in base64url, `+`/`/` in
    // base64): one without any (about 6% of Ed25519 signatures) reads the same in both alphabets, and RFC 8941
    // lets a parser accept missing padding, so that case proves nothing about the decoders.
    const signUntil = async (profile: '3.1' | '3.2', alphabet: RegExp) => {
      for (;;) {
        const signed = await signRequest(message, { key, now: NOW, profile })
        if (alphabet.test(signed.headers['signature'] ?? '')) return signed
      }
    }
    const signed31 = await signUntil('3.1', /[-_]/)
    expect(await codeOf(verifyRequest(signed31, { ...base, profile: '3.2' }))).toBe(
      'request_signature_header_malformed',
    )
    const signed32 = await signUntil('3.2', /[+/]/)
    expect(await codeOf(verifyRequest(signed32, { ...base, profile: '3.1' }))).toBe(
      'request_signature_header_malformed',
    )
  })

  it('accepts only adcp_use "request-signing"', async () => {
    const signed = await signRequest(message, { key, now: NOW })
    const webhookKey = { ...publicOf(key), adcp_use: 'webhook-signing' }
    expect(await codeOf(verifyRequest(signed, { ...base, keys: { keys: [webhookKey] } }))).toBe(
      'request_signature_key_purpose_invalid',
    )
  })

  it('never throws anything but SignatureError on arbitrary messages', async () => {
    const signed = await signRequest(message, { key, now: NOW })
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          { method: fc.anything(), url: fc.anything(), headers: fc.anything(), body: fc.anything() },
          { requiredKeys: [] },
        ),
        fc.boolean(),
        fc.constantFrom('3.1', '3.2') as fc.Arbitrary<'3.1' | '3.2'>,
        async (shape, keepHeaders, profile) => {
          const candidate = { ...(keepHeaders ? signed : {}), ...shape } as unknown as HttpMessage
          const capability = { required_for: ['create_media_buy'], warn_for: ['x'] }
          for (const attempt of [
            () => verifyRequest(candidate, { ...base, profile, capability, hasOtherCredential: true }),
            () => signRequest(candidate, { key, now: NOW, profile }),
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
  })
})
