import { describe, expect, it } from 'vitest'
import { readConformanceJson } from '@adwire/conformance'
import { assertHmacSecret, signHmacWebhook, SignatureError, verifyHmacWebhook } from '../../src/index.js'

interface Vector {
  id: string
  timestamp: number | string
  raw_body: string
  expected_signature?: string
  signature?: string | null
  current_time?: number
  expected_verifier_action?: string
}
const file = readConformanceJson('test-vectors/webhook-hmac-sha256.json') as {
  secret: string
  vectors: Vector[]
  rejection_vectors: Vector[]
  secret_rejection_vectors: Array<{ description: string; secret: string }>
  signer_side: {
    rejection_vectors: Array<{ id: string; signer_input_body: string }>
    positive_vectors: Array<{ id: string; signer_input_body: string }>
  }
}
const { secret } = file

async function rejection(promise: Promise<unknown>): Promise<SignatureError> {
  try {
    await promise
  } catch (error) {
    if (SignatureError.is(error)) return error
    throw error
  }
  throw new Error('expected a rejection')
}

describe('webhook-hmac-sha256.json: vectors', () => {
  it('has them all', () => expect(file.vectors).toHaveLength(15))

  it.each(file.vectors.map((vector) => [vector.id, vector] as const))('%s', async (_id, vector) => {
    const headers = {
      'X-ADCP-Signature': vector.expected_signature!,
      'X-ADCP-Timestamp': String(vector.timestamp),
    }
    const message = { headers, body: vector.raw_body }
    const now = Number(vector.timestamp)
    if (vector.expected_verifier_action === 'reject-malformed') {
      // The MAC is valid; the body is ambiguous: malformed, never "signature invalid".
      expect((await rejection(verifyHmacWebhook(message, { secret, now }))).code).toBe(
        'webhook_body_malformed',
      )
      await expect(verifyHmacWebhook(message, { secret, now, checkBody: false })).resolves.toEqual({
        timestamp: now,
      })
      await expect(signHmacWebhook(vector.raw_body, { secret, now })).rejects.toMatchObject({
        code: 'duplicate_key_input',
      })
      return
    }
    await expect(verifyHmacWebhook(message, { secret, now })).resolves.toEqual({ timestamp: now })
    expect(await signHmacWebhook(vector.raw_body, { secret, now })).toEqual(headers)
    // The same bytes given as a Uint8Array, and the headers in another case, verify the same way.
    const lower = {
      'x-adcp-signature': headers['X-ADCP-Signature'],
      'x-adcp-timestamp': headers['X-ADCP-Timestamp'],
    }
    await expect(
      verifyHmacWebhook(
        { headers: new Headers(lower), body: new TextEncoder().encode(vector.raw_body) },
        { secret, now },
      ),
    ).resolves.toBeDefined()
  })
})

describe('webhook-hmac-sha256.json: rejection vectors', () => {
  const expectedCode: Record<string, string> = {
    'truncated-signature': 'webhook_hmac_malformed',
    'wrong-algorithm-prefix': 'webhook_hmac_malformed',
    'empty-signature': 'webhook_hmac_missing',
    'missing-signature': 'webhook_hmac_missing',
    'timestamp-too-old': 'webhook_hmac_timestamp_invalid',
    'timestamp-too-future': 'webhook_hmac_timestamp_invalid',
    'non-numeric-timestamp': 'webhook_hmac_timestamp_invalid',
    'body-tampered': 'webhook_hmac_invalid',
    'double-prefix': 'webhook_hmac_malformed',
    'signer-spaced-wire-compact': 'webhook_hmac_invalid',
  }
  it('has a code for every one', () =>
    expect(file.rejection_vectors.map((vector) => vector.id).sort()).toEqual(
      Object.keys(expectedCode).sort(),
    ))

  it.each(file.rejection_vectors.map((vector) => [vector.id, vector] as const))('%s', async (id, vector) => {
    const headers: Record<string, string> = { 'X-ADCP-Timestamp': String(vector.timestamp) }
    if (vector.signature !== null && vector.signature !== undefined)
      headers['X-ADCP-Signature'] = vector.signature
    const now = vector.current_time ?? (typeof vector.timestamp === 'number' ? vector.timestamp : 1700000000)
    const error = await rejection(verifyHmacWebhook({ headers, body: vector.raw_body }, { secret, now }))
    expect(error.code).toBe(expectedCode[id])
  })
})

describe('webhook-hmac-sha256.json: secrets and signer-side vectors', () => {
  it.each(file.secret_rejection_vectors.map((vector) => [vector.description, vector.secret] as const))(
    'rejects %s',
    (_d, bad) => {
      expect(() => assertHmacSecret(bad)).toThrowError(
        expect.objectContaining({ code: 'webhook_credential_invalid' }),
      )
    },
  )

  it.each(file.signer_side.rejection_vectors.map((vector) => [vector.id, vector.signer_input_body] as const))(
    'signer refuses %s',
    async (_id, body) => {
      await expect(signHmacWebhook(body, { secret, now: 1700000000 })).rejects.toMatchObject({
        code: 'duplicate_key_input',
      })
    },
  )

  it.each(file.signer_side.positive_vectors.map((vector) => [vector.id, vector.signer_input_body] as const))(
    'signer signs %s, and the signature verifies',
    async (_id, body) => {
      const headers = await signHmacWebhook(body, { secret, now: 1700000000 })
      await expect(verifyHmacWebhook({ headers, body }, { secret, now: 1700000030 })).resolves.toEqual({
        timestamp: 1700000000,
      })
    },
  )

  it('accepts the previous secret during a rotation, and nothing else', async () => {
    const previous = 'p'.repeat(16) + 'q'.repeat(16)
    const headers = await signHmacWebhook('{}', { secret: previous, now: 1 })
    await expect(
      verifyHmacWebhook({ headers, body: '{}' }, { secret: [secret, previous], now: 1 }),
    ).resolves.toBeDefined()
    expect((await rejection(verifyHmacWebhook({ headers, body: '{}' }, { secret, now: 1 }))).code).toBe(
      'webhook_hmac_invalid',
    )
  })
})
