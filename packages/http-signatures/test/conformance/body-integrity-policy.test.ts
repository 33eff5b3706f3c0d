/**
 * compliance/3.2.0-beta.5/test-vectors/request-signing/body-integrity-policy.json states verifier facts, not wire
 * bytes ("post-parse reference-evaluator vectors"). Each case is turned into a real request with those facts,
 * signed with the conformance key, and run through verifyRequest.
 */
import { readConformanceJson } from '@adwire/conformance'
import { describe, expect, it } from 'vitest'
import { decodeBase64Url, encodeBase64, encodeBase64Url } from '../../src/base64.js'
import { SignatureError, signRequest, verifyRequest, type RequestSigningCapability } from '../../src/index.js'
import { privateKeys, rejection } from './signing-vectors.js'

interface PolicyCase {
  id: string
  endpoint_profile: '3.1' | '3.2'
  mode: string
  legacy_digest_policy?: 'required' | 'forbidden' | 'either'
  has_body: boolean
  signature_present: boolean
  signature_header_state?: 'malformed_pair'
  covers_content_digest?: boolean
  digest_matches_body?: boolean
  cryptographic_signature_valid?: boolean
  fallback_auth_valid: boolean
  request_body_adcp_version?: string
  expected: {
    action: 'accept' | 'accept_with_warning' | 'reject' | 'reject_unauthenticated'
    error_code?: string
    authentication_source?: 'signature' | 'fallback'
    verified_signer_identity: boolean
  }
}

const VERSION = '3.2.0-beta.5'
const file = readConformanceJson(
  `compliance/${VERSION}/test-vectors/request-signing/body-integrity-policy.json`,
) as { cases: PolicyCase[] }
const key = privateKeys(VERSION, 'request-signing').get('test-ed25519-2026')!
const publicKey = { ...key, key_ops: ['verify'] }
delete (publicKey as { d?: string }).d
const NOW = 1776520800

async function buildRequest(testCase: PolicyCase) {
  const protocol = testCase.mode.startsWith('protocol_methods_')
  const url = protocol ? 'https://seller.example.com/mcp' : 'https://seller.example.com/adcp/create_media_buy'
  const payload = protocol
    ? { jsonrpc: '2.0', method: 'tasks/cancel', params: { taskId: 'task_1' }, id: 1 }
    : {
        plan_id: 'plan_001',
        ...(testCase.request_body_adcp_version ? { adcp_version: testCase.request_body_adcp_version } : {}),
      }
  const body = testCase.has_body ? JSON.stringify(payload) : undefined
  const message = {
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    ...(body ? { body } : {}),
  }
  if (!testCase.signature_present) return message
  const covers = testCase.covers_content_digest ?? false
  // Sign with the 3.1 encoding so a body can be left unbound, then re-encode the Signature as 3.2 sf-binary.
  const signed = await signRequest(message, { key, now: NOW, profile: '3.1', coverContentDigest: covers })
  const headers: Record<string, string> = { ...signed.headers }
  let signature = decodeBase64Url(headers['signature']!.slice(6, -1))!
  if (testCase.cryptographic_signature_valid === false)
    signature = signature.map((byte, index) => (index === 0 ? byte ^ 1 : byte))
  if (testCase.endpoint_profile === '3.2') headers['signature'] = `sig1=:${encodeBase64(signature)}:`
  else headers['signature'] = `sig1=:${encodeBase64Url(signature)}:`
  if (testCase.signature_header_state === 'malformed_pair') delete headers['signature-input']
  const tampered = testCase.digest_matches_body === false
  return { ...signed, headers, ...(tampered ? { body: `${body} ` } : {}) }
}

describe(`compliance/${VERSION}/test-vectors/request-signing/body-integrity-policy.json`, () => {
  it('has its cases', () => expect(file.cases).toHaveLength(17))

  it.each(file.cases.map((testCase) => [testCase.id, testCase] as const))('%s', async (_id, testCase) => {
    const operation = testCase.mode.startsWith('protocol_methods_') ? 'tasks/cancel' : 'create_media_buy'
    const list = testCase.mode.replace(/^protocol_methods_/, '')
    const capability: RequestSigningCapability = {
      ...(testCase.legacy_digest_policy ? { covers_content_digest: testCase.legacy_digest_policy } : {}),
      [testCase.mode]: [operation],
      ...(list === 'supported_for' ? {} : { [testCase.mode.replace(list, 'supported_for')]: [operation] }),
    }
    const message = await buildRequest(testCase)
    const outcome = verifyRequest(message, {
      keys: { keys: [publicKey] },
      now: NOW,
      profile: testCase.endpoint_profile,
      capability,
      hasOtherCredential: testCase.fallback_auth_valid,
    })
    const { expected } = testCase
    if (expected.action === 'reject' || expected.action === 'reject_unauthenticated') {
      const error = await rejection(outcome)
      expect(SignatureError.is(error), String(error)).toBe(true)
      if (expected.error_code) expect((error as SignatureError).code).toBe(expected.error_code)
      return
    }
    const result = await outcome
    const status =
      expected.action === 'accept_with_warning'
        ? 'unverified'
        : expected.authentication_source === 'signature'
          ? 'verified'
          : 'unsigned'
    expect(result.status).toBe(status)
    expect(result.status === 'verified').toBe(expected.verified_signer_identity)
  })
})
