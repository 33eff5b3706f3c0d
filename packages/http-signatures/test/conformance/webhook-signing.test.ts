import { describe, expect, it } from 'vitest'
import { buildSignatureBase, SignatureError, verifyWebhook } from '../../src/index.js'
import { readVector, rejection, vectorFiles, vectorJwks, vectorState, VERSIONS } from './signing-vectors.js'

const FOLDER = 'webhook-signing'
// These negatives carry the base of the message before it was broken: 010 and 011 have no parseable
// Signature-Input, and 012 and 014 dropped a parameter from Signature-Input but not from expected_signature_base.
const BASE_NOT_OF_OWN_HEADERS = new Set([
  'negative/010-malformed-signature-input.json',
  'negative/011-signature-without-input.json',
  'negative/012-missing-expires-param.json',
  'negative/014-missing-nonce-param.json',
])

describe.each(VERSIONS)(`compliance/%s/test-vectors/${FOLDER}`, (version) => {
  const files = vectorFiles(version, FOLDER)

  it('has 8 positive and 21 negative vectors', () => {
    expect(files.filter((file) => file.startsWith('positive/'))).toHaveLength(8)
    expect(files.filter((file) => file.startsWith('negative/'))).toHaveLength(21)
  })

  it.each(files)('%s', async (file) => {
    const vector = readVector(version, FOLDER, file)
    const message = vector.request
    const keys = vectorJwks(version, FOLDER, vector)
    // The rate-abuse vector fills a keyid to AdCP's suggested webhook sizing, 100,000 nonces, and passes that
    // count as an explicit maxNoncesPerKey (which wins over the default rate cap of 2,100,000 nonces).
    const state = await vectorState(vector, 100_000)
    const outcome = verifyWebhook(message, { keys, now: vector.reference_now, ...state })

    if (vector.expected_outcome.success) {
      const verified = await outcome
      expect(verified.label).toBe('sig1')
      expect(buildSignatureBase(message, { profile: 'webhook' })).toBe(vector.expected_signature_base)
      // The nonce is now burned: the same delivery again is a replay.
      await expect(
        verifyWebhook(message, { keys, now: vector.reference_now, ...state }),
      ).rejects.toMatchObject({
        code: 'webhook_signature_replayed',
      })
      return
    }
    const error = await rejection(outcome)
    expect(SignatureError.is(error), String(error)).toBe(true)
    expect((error as SignatureError).code).toBe(vector.expected_outcome.error_code)
    // Negative vectors state a base too; where it is the base of their own headers, we compute the same bytes.
    if (vector.expected_signature_base !== undefined && !BASE_NOT_OF_OWN_HEADERS.has(file)) {
      expect(buildSignatureBase(message, { profile: 'webhook' })).toBe(vector.expected_signature_base)
    }
  })
})
