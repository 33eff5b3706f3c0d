import { readConformanceJson } from '@adwire/conformance'
import { describe, expect, it } from 'vitest'
import { SignatureError } from '../errors.js'
import { capabilitiesDocument } from '../testing/capabilities-fixture.js'
import { assertKeyOrigin, declaredPosture, readSigningPosture } from './capabilities-posture.js'

const BRAND_URL = 'https://brand.seller.test/.well-known/brand.json'
const KEYS_ORIGIN = 'https://keys.seller.test'
const JWKS_URI = `${KEYS_ORIGIN}/.well-known/jwks.json`

function codeOf(run: () => unknown): string {
  try {
    run()
  } catch (error) {
    if (SignatureError.is(error)) return error.code
    throw error
  }
  return 'passed'
}

describe('readSigningPosture', () => {
  it('reads a capabilities document shaped like the official response schema', () => {
    const schema = readConformanceJson('schemas', '3.1.19', 'protocol', 'get-adcp-capabilities-response.json')
    const envelope = readConformanceJson('schemas', '3.1.19', 'core', 'protocol-envelope.json')
    const document = capabilitiesDocument({
      brand_json_url: BRAND_URL,
      key_origins: { request_signing: KEYS_ORIGIN, webhook_signing: KEYS_ORIGIN },
    })
    for (const field of [...schema.required, ...envelope.required] as string[]) {
      expect(document).toHaveProperty(field)
    }
    for (const field of Object.keys(document)) {
      expect({ ...schema.properties, ...envelope.properties }).toHaveProperty(field)
    }
    const identity = schema.properties.identity.properties
    expect(BRAND_URL).toMatch(new RegExp(identity.brand_json_url.pattern as string))
    expect(Object.keys(identity.key_origins.properties)).toEqual(
      expect.arrayContaining(['request_signing', 'webhook_signing']),
    )
    expect(readSigningPosture(document, 'webhook_signing')).toEqual({
      brandJsonUrl: BRAND_URL,
      keyOrigin: KEYS_ORIGIN,
      posture: 'webhook_signing.supported',
    })
  })

  it('finds request signing in any of the four operation lists, and only when non-empty', () => {
    const only = (list: string) => ({ request_signing: { supported: true, [list]: ['tasks/cancel'] } })
    expect(declaredPosture(only('protocol_methods_required_for'), 'request_signing')).toBe(
      'request_signing.protocol_methods_required_for',
    )
    expect(declaredPosture(only('required_for'), 'request_signing')).toBe('request_signing.required_for')
    expect(
      declaredPosture({ request_signing: { supported: true, supported_for: [] } }, 'request_signing'),
    ).toBe(undefined)
    expect(declaredPosture({ webhook_signing: { supported: 'true' } }, 'webhook_signing')).toBe(undefined)
  })

  it('refuses a missing, relative or non-https brand_json_url', () => {
    for (const identity of [undefined, {}, { brand_json_url: '/brand.json' }, { brand_json_url: 42 }]) {
      expect(codeOf(() => readSigningPosture(capabilitiesDocument(identity), 'request_signing'))).toBe(
        'request_signature_brand_json_url_missing',
      )
    }
    const http = capabilitiesDocument({ brand_json_url: 'http://brand.seller.test/brand.json' })
    expect(codeOf(() => readSigningPosture(http, 'request_signing'))).toBe(
      'request_signature_brand_json_url_missing',
    )
    expect(readSigningPosture(http, 'request_signing', { allowInsecure: true }).brandJsonUrl).toBe(
      'http://brand.seller.test/brand.json',
    )
  })
})

describe('assertKeyOrigin', () => {
  const posture = (keyOrigin: unknown, declared = true) =>
    readSigningPosture(
      capabilitiesDocument(
        { brand_json_url: BRAND_URL, key_origins: { request_signing: keyOrigin } },
        declared ? {} : { request_signing: { supported: false } },
      ),
      'request_signing',
    )

  it('compares hosts, ignoring case, a trailing dot and the path, but not the port', () => {
    expect(
      codeOf(() => assertKeyOrigin('request_signing', posture('https://KEYS.Seller.test./x'), JWKS_URI)),
    ).toBe('passed')
    expect(
      codeOf(() => assertKeyOrigin('request_signing', posture('https://keys.seller.test:443'), JWKS_URI)),
    ).toBe('passed')
    expect(
      codeOf(() => assertKeyOrigin('request_signing', posture('https://keys.seller.test:8443'), JWKS_URI)),
    ).toBe('request_signature_key_origin_mismatch')
  })

  it('treats an unparseable or non-string declared origin as a mismatch', () => {
    for (const declared of ['keys.seller.test', 7]) {
      expect(codeOf(() => assertKeyOrigin('request_signing', posture(declared), JWKS_URI))).toBe(
        'request_signature_key_origin_mismatch',
      )
    }
  })

  it('checks a declared origin even when the purpose declares no signing', () => {
    expect(
      codeOf(() => assertKeyOrigin('request_signing', posture('https://other.seller.test', false), JWKS_URI)),
    ).toBe('request_signature_key_origin_mismatch')
  })
})
