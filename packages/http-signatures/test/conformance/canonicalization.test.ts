import { readConformanceJson } from '@adwire/conformance'
import { describe, expect, it } from 'vitest'
import { SignatureError } from '../../src/index.js'
import { canonicalizeTargetUri } from '../../src/internal.js'
import { VERSIONS } from './signing-vectors.js'

interface CanonicalizationCase {
  name: string
  input_url: string
  expected_target_uri?: string
  expected_authority?: string
  reject?: true
  expected_error_code?: string
}

describe.each(VERSIONS)('compliance/%s/test-vectors/request-signing/canonicalization.json', (version) => {
  const { cases } = readConformanceJson(
    `compliance/${version}/test-vectors/request-signing/canonicalization.json`,
  ) as {
    cases: CanonicalizationCase[]
  }

  it('has its cases', () => expect(cases).toHaveLength(version === '3.1.19' ? 31 : 37))

  it.each(cases.map((testCase) => [testCase.name, testCase] as const))('%s', (_name, testCase) => {
    if (testCase.reject) {
      let error: unknown
      try {
        canonicalizeTargetUri(testCase.input_url)
      } catch (caught) {
        error = caught
      }
      expect(SignatureError.is(error), `${testCase.input_url} should be rejected`).toBe(true)
      expect((error as SignatureError).code).toBe(testCase.expected_error_code)
      return
    }
    expect(canonicalizeTargetUri(testCase.input_url)).toEqual({
      targetUri: testCase.expected_target_uri,
      authority: testCase.expected_authority,
      scheme: testCase.expected_target_uri!.slice(0, testCase.expected_target_uri!.indexOf(':')),
    })
  })
})
