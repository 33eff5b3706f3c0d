import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { listConformanceFiles, readConformanceJson } from '@adwire/conformance'
import { run, type Io } from './index.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const folder = mkdtempSync(path.join(tmpdir(), 'adwire-cli-sig-'))
let files = 0
const write = (content: unknown) => {
  const file = path.join(folder, `f${(files += 1)}.json`)
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content))
  return file
}

async function adwire(...argv: string[]) {
  let stdout = ''
  let stderr = ''
  const io: Io = {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    read: async (file) => readFileSync(file),
  }
  const code = await run(argv, io)
  return { code, stdout, stderr, json: () => JSON.parse(stdout) as Record<string, unknown> }
}

interface Vector {
  request: { method: string; url: string; headers: Record<string, string>; body: string }
  reference_now: number
  jwks_ref?: string[]
  jwks_override?: Record<string, unknown>
  expected_outcome: { success: boolean; error_code?: string }
  test_harness_state?: {
    replay_cache_entries?: Array<{ keyid: string; nonce: string }>
    revoked_kids?: string[]
    [key: string]: unknown
  }
}
type Jwk = { kid: string; [key: string]: unknown }

const WEBHOOK = 'compliance/3.1.19/test-vectors/webhook-signing'
const keysFile = readConformanceJson(WEBHOOK, 'keys.json') as { keys: Jwk[] }
const publicKey = ({ _private_d_for_test_only: _d, $comment: _c, ...jwk }: Jwk) => jwk
const jwksFor = (vector: Vector) => ({
  keys: keysFile.keys
    .filter((key) => vector.jwks_ref?.includes(key.kid))
    .map((key) => publicKey({ ...key, ...((vector.jwks_override?.[key.kid] as object | undefined) ?? {}) })),
})

describe('adwire webhook verify: every 3.1.19 webhook-signing vector through the CLI', () => {
  const vectors = listConformanceFiles(WEBHOOK, (file) => /^(positive|negative)\/.*\.json$/.test(file))
  it.each(vectors)('%s', async (file) => {
    const vector = readConformanceJson(WEBHOOK, file) as Vector
    const state = vector.test_harness_state ?? {}
    // Caps and stale revocation lists have no CLI flags; the library conformance suite runs those vectors.
    if (state.per_keyid_cap_filled_for !== undefined || state.revocation_list_stale_seconds !== undefined) {
      expect(vector.expected_outcome.success).toBe(false)
      return
    }
    const argv = [
      'webhook',
      'verify',
      '--request',
      write(vector.request),
      '--jwks',
      write(jwksFor(vector)),
      '--now',
      String(vector.reference_now),
    ]
    for (const entry of state.replay_cache_entries ?? [])
      argv.push('--replayed', `${entry.keyid}:${entry.nonce}`)
    for (const kid of state.revoked_kids ?? []) argv.push('--revoked', kid)
    const result = await adwire(...argv)
    if (vector.expected_outcome.success) {
      expect(result.code, result.stdout).toBe(0)
      expect(result.json()).toEqual({ ok: true, keyid: expect.any(String) })
    } else {
      expect(result.code).toBe(1)
      expect(result.json()).toMatchObject({ ok: false, code: vector.expected_outcome.error_code })
    }
  })
})

describe('adwire keys, sign, verify and explain', () => {
  it('generates a key, signs a webhook with it and verifies the result', async () => {
    const generated = await adwire('keys', 'generate', '--alg', 'es256', '--kid', 'cli-test-1')
    expect(generated.code).toBe(0)
    const { private_jwk, jwks } = generated.json() as { private_jwk: Jwk; jwks: { keys: Jwk[] } }
    expect(jwks.keys[0]).toMatchObject({
      kid: 'cli-test-1',
      kty: 'EC',
      use: 'sig',
      key_ops: ['verify'],
      adcp_use: 'request-signing',
    })
    const request = {
      method: 'POST',
      url: 'https://buyer.example/hook',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    }
    const signed = await adwire(
      'webhook',
      'sign',
      '--request',
      write(request),
      '--key',
      write({ private_jwk }),
      '--now',
      '1776520800',
    )
    expect(signed.code).toBe(0)
    const signedRequest = signed.json() as { headers: Record<string, string> }
    expect(Object.keys(signedRequest.headers).sort()).toEqual([
      'content-digest',
      'content-type',
      'signature',
      'signature-input',
    ])
    const verified = await adwire(
      'webhook',
      'verify',
      '--request',
      write(signedRequest),
      '--jwks',
      write(jwks),
      '--now',
      '1776520810',
    )
    expect(verified.json()).toEqual({ ok: true, keyid: 'cli-test-1' })
    // Outside the window the same request is rejected.
    const late = await adwire(
      'webhook',
      'verify',
      '--request',
      write(signedRequest),
      '--jwks',
      write(jwks),
      '--now',
      '1776530000',
    )
    expect(late).toMatchObject({ code: 1 })
    expect(late.json()).toMatchObject({ code: 'webhook_signature_window_invalid' })
  })

  it('signs and verifies requests under profiles 3.1 and 3.2', async () => {
    const { private_jwk, jwks } = (
      await adwire('keys', 'generate', '--alg', 'ed25519', '--kid', 'cli-req')
    ).json() as { private_jwk: Jwk; jwks: unknown }
    const request = {
      method: 'POST',
      url: 'https://seller.example/adcp/create_media_buy',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    }
    for (const profile of ['3.1', '3.2']) {
      const signed = await adwire(
        'request',
        'sign',
        '--profile',
        profile,
        '--request',
        write(request),
        '--key',
        write(private_jwk),
        '--now',
        '1776520800',
      )
      const verified = await adwire(
        'request',
        'verify',
        '--profile',
        profile,
        '--request',
        write(signed.json()),
        '--jwks',
        write(jwks),
        '--now',
        '1776520800',
      )
      expect(verified.json(), profile).toEqual({ ok: true, keyid: 'cli-req' })
    }
  })

  it('explain walks the checklist and shows where and why it stopped, with the signature base', async () => {
    const vector = readConformanceJson(WEBHOOK, 'negative/009-content-digest-mismatch.json') as Vector
    const result = await adwire(
      'explain',
      'webhook',
      '--request',
      write(vector.request),
      '--jwks',
      write(jwksFor(vector)),
      '--now',
      String(vector.reference_now),
    )
    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(/✓ 10 {2}signature verifies/)
    expect(result.stdout).toMatch(/✗ 11 {2}Content-Digest matches the body {3}← stopped here/)
    expect(result.stdout).toContain('rejected at step 11: webhook_signature_digest_mismatch')
    expect(result.stdout).toContain(
      '"@signature-params": ("@method" "@target-uri" "@authority" "content-type" "content-digest")',
    )

    const positive = readConformanceJson(WEBHOOK, 'positive/001-basic-post.json') as Vector & {
      expected_signature_base: string
    }
    const accepted = await adwire(
      'explain',
      '--request',
      write(positive.request),
      '--jwks',
      write(jwksFor(positive)),
      '--now',
      String(positive.reference_now),
    )
    expect(accepted.code).toBe(0)
    expect(accepted.stdout).toContain('accepted: keyid test-ed25519-webhook-2026')
    expect(accepted.stdout).toContain(
      positive.expected_signature_base
        .split('\n')
        .map((line) => `  ${line}`)
        .join('\n'),
    )
  })

  it('hmac-sign and hmac-verify agree with the legacy vectors', async () => {
    const hmac = readConformanceJson('test-vectors/webhook-hmac-sha256.json') as {
      secret: string
      vectors: Array<{
        id: string
        timestamp: number
        raw_body: string
        expected_signature: string
        expected_verifier_action?: string
      }>
    }
    const secretFile = write(`${hmac.secret}\n`)
    const vector = hmac.vectors.find((candidate) => candidate.id === 'nested')!
    const request = {
      method: 'POST',
      url: 'https://buyer.example/hook',
      headers: { 'content-type': 'application/json' },
      body: vector.raw_body,
    }
    const signed = await adwire(
      'webhook',
      'hmac-sign',
      '--request',
      write(request),
      '--secret-file',
      secretFile,
      '--now',
      String(vector.timestamp),
    )
    const headers = (signed.json() as { headers: Record<string, string> }).headers
    expect(headers['X-ADCP-Signature']).toBe(vector.expected_signature)
    const verified = await adwire(
      'webhook',
      'hmac-verify',
      '--request',
      write(signed.json()),
      '--secret-file',
      secretFile,
      '--now',
      String(vector.timestamp),
    )
    expect(verified.json()).toEqual({ ok: true })
    const tampered = { ...(signed.json() as object), body: '{}' }
    const rejected = await adwire(
      'webhook',
      'hmac-verify',
      '--request',
      write(tampered),
      '--secret-file',
      secretFile,
      '--now',
      String(vector.timestamp),
    )
    expect(rejected.code).toBe(1)
    expect(rejected.json()).toMatchObject({ code: 'webhook_hmac_invalid' })
  })

  it('answers bad usage and unreadable input with exit code 2 and a message on stderr', async () => {
    expect(await adwire('webhook', 'verify', '--jwks', write({ keys: [] }))).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--request is required'),
    })
    expect(
      await adwire('webhook', 'verify', '--request', write('{nope'), '--jwks', write({ keys: [] })),
    ).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('is not JSON'),
    })
    expect(
      await adwire(
        'webhook',
        'verify',
        '--request',
        write({ method: 'POST' }),
        '--jwks',
        write({ keys: [] }),
      ),
    ).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('"url" must be an absolute URL'),
    })
    expect(
      await adwire(
        'webhook',
        'verify',
        '--request',
        path.join(folder, 'missing.json'),
        '--jwks',
        write({ keys: [] }),
      ),
    ).toMatchObject({ code: 2 })
    expect(
      await adwire(
        'webhook',
        'verify',
        '--request',
        write({ method: 'POST', url: 'https://a.example/', headers: {}, body: '' }),
        '--jwks',
        write({}),
      ),
    ).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('must be {"keys":[…]}'),
    })
    expect(await adwire('keys', 'generate', '--alg', 'rsa', '--kid', 'x')).toMatchObject({ code: 2 })
    expect(await adwire('webhook', 'verify', '--nope')).toMatchObject({ code: 2 })
    expect(
      await adwire(
        'request',
        'sign',
        '--request',
        write({ method: 'POST', url: 'https://a.example/', headers: {}, body: '' }),
        '--key',
        write({ kid: 'k' }),
      ),
    ).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('no private JWK'),
    })
  })

  it('works as the built command: a signed request from stdin', async () => {
    const bin = path.join(here, '../dist/bin.js')
    const vector = readConformanceJson(WEBHOOK, 'positive/002-es256-post.json') as Vector
    const child = promisify(execFile)(process.execPath, [
      bin,
      'webhook',
      'verify',
      '--request',
      '-',
      '--jwks',
      write(jwksFor(vector)),
      '--now',
      String(vector.reference_now),
    ])
    child.child.stdin!.end(JSON.stringify(vector.request))
    const { stdout } = await child
    expect(JSON.parse(stdout)).toEqual({ ok: true, keyid: 'test-es256-webhook-2026' })
  })
})
