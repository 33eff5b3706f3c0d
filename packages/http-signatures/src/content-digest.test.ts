import { describe, expect, it } from 'vitest'
import { createContentDigest, readSha256Digest, verifyContentDigest } from './content-digest.js'
import { SignatureError } from './errors.js'

const body = '{"plan_id":"plan_001"}'
const STANDARD = 'sha-256=:SNIVma8dgUBx/U1CBaYFQnsJep9S0/tXaNXlQQOdoxQ=:'

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    if (SignatureError.is(error)) return error.code
    throw error
  }
  return 'resolved'
}

describe('Content-Digest', () => {
  it('emits sha-256 in padded standard base64 (what the vectors carry)', async () => {
    expect(await createContentDigest(body)).toBe(STANDARD)
    expect(await createContentDigest(new TextEncoder().encode(body))).toBe(STANDARD)
    expect(await createContentDigest(undefined)).toBe(
      'sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:',
    )
  })

  it.each([
    STANDARD,
    'sha-256=:SNIVma8dgUBx_U1CBaYFQnsJep9S0_tXaNXlQQOdoxQ:',
    'sha-256=:SNIVma8dgUBx/U1CBaYFQnsJep9S0/tXaNXlQQOdoxQ:',
    `sha-512=:AAAA:, ${STANDARD}`,
  ])('accepts %s', async (value) => {
    await expect(verifyContentDigest(value, body)).resolves.toBeUndefined()
  })

  it.each([
    ['two sha-256 members', `${STANDARD}, ${STANDARD}`],
    ['mixed alphabets', 'sha-256=:SNIVma8dgUBx/U1CBaYFQnsJep9S0_tXaNXlQQOdoxQ=:'],
    ['a string value', 'sha-256="SNIVma8dgUBx"'],
    ['not a dictionary', 'SHA-256=abc'],
  ])('finds %s malformed', async (_name, value) => {
    expect(readSha256Digest(value)).toBeUndefined()
    expect(await codeOf(verifyContentDigest(value, body, { profile: 'request' }))).toBe(
      'request_signature_header_malformed',
    )
  })

  it('reports a mismatch, or no sha-256 member, as a digest mismatch', async () => {
    expect(await codeOf(verifyContentDigest(STANDARD, `${body} `))).toBe('webhook_signature_digest_mismatch')
    expect(await codeOf(verifyContentDigest('sha-512=:AAAA:', body))).toBe(
      'webhook_signature_digest_mismatch',
    )
    expect(readSha256Digest('sha-512=:AAAA:')).toBeNull()
  })
})
