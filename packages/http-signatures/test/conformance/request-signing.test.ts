import { describe, expect, it } from 'vitest'
import {
  buildSignatureBase,
  SignatureError,
  verifyRequest,
  type VerifyRequestOptions,
} from '../../src/index.js'
import {
  readVector,
  rejection,
  vectorFiles,
  vectorJwks,
  vectorState,
  VERSIONS,
  type SigningVector,
} from './signing-vectors.js'

const FOLDER = 'request-signing'
// The signed-requests-runner test kit grades the per-keyid cap at 100 requests (agents may lower their
// production cap for the test counterparty); filling the 1,000,000 default would only cost time.
const GRADING_CAP = 100

const COUNTS: Record<(typeof VERSIONS)[number], { positive: number; negative: number }> = {
  '3.1.19': { positive: 12, negative: 28 },
  '3.2.0-beta.5': { positive: 13, negative: 30 },
}

async function options(version: string, vector: SigningVector): Promise<VerifyRequestOptions> {
  const capability = vector.verifier_capability
  return {
    keys: vectorJwks(version, FOLDER, vector),
    now: vector.reference_now,
    // Vectors without signing_profile_version predate 3.2 and are 3.1-profile vectors.
    profile: vector.signing_profile_version ?? '3.1',
    ...(capability ? { capability } : {}),
    // The harness's credential check: an Authorization header stands for a valid bearer token.
    hasOtherCredential: Object.keys(vector.request.headers).some(
      (name) => name.toLowerCase() === 'authorization',
    ),
    ...(await vectorState(vector, GRADING_CAP)),
  }
}

describe.each(VERSIONS)(`compliance/%s/test-vectors/${FOLDER}`, (version) => {
  const files = vectorFiles(version, FOLDER)

  it(`has ${COUNTS[version].positive} positive and ${COUNTS[version].negative} negative vectors`, () => {
    expect(files.filter((file) => file.includes('positive/'))).toHaveLength(COUNTS[version].positive)
    expect(files.filter((file) => file.includes('negative/'))).toHaveLength(COUNTS[version].negative)
  })

  it.each(files)('%s', async (file) => {
    const vector = readVector(version, FOLDER, file)
    const message = vector.request
    const verifyOptions = await options(version, vector)
    const outcome = verifyRequest(message, verifyOptions)

    if (vector.expected_outcome.success) {
      const verified = await outcome
      expect(verified.status).toBe('verified')
      if (vector.expected_signature_base !== undefined) {
        expect(buildSignatureBase(message, { profile: 'request' })).toBe(vector.expected_signature_base)
      }
      await expect(verifyRequest(message, verifyOptions)).rejects.toMatchObject({
        code: 'request_signature_replayed',
      })
      return
    }
    const error = await rejection(outcome)
    expect(SignatureError.is(error), String(error)).toBe(true)
    expect((error as SignatureError).code).toBe(vector.expected_outcome.error_code)
    if (vector.expected_signature_base !== undefined) {
      expect(buildSignatureBase(message, { profile: 'request' })).toBe(vector.expected_signature_base)
    }
  })
})
