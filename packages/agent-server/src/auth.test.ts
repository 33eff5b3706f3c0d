/* eslint-disable @typescript-eslint/no-explicit-any -- loose JSON access in assertions */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { MemoryClaimStore } from '@adwire/webhooks'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashedTokenAuth } from './auth.js'
import { BUYER_TOKEN, startAgent, tokens, type RunningAgent } from './testing/support.js'

const NOW = 1_790_000_000
const ISSUER = 'https://auth.example'
const AUDIENCE = 'https://agent.example'
let agent: RunningAgent
let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey']

beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true })
  privateKey = pair.privateKey
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' }
  agent = await startAgent({
    auth: { tokens, jwt: { issuer: ISSUER, audience: AUDIENCE, key: { keys: [jwk] } } },
    idempotency: { store: new MemoryClaimStore() },
    now: () => NOW,
  })
})
afterAll(() => agent.close())

/** Signs a JWT with the test key; `null` leaves a registered claim out, `''` leaves `sub` out. */
function jwt(
  claims: Record<string, unknown>,
  options: {
    iat?: number | null
    exp?: number | null
    iss?: string | null
    aud?: string | null
    sub?: string
  } = {},
) {
  let builder = new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'k1' })
  if (options.iat !== null) builder = builder.setIssuedAt(options.iat ?? NOW - 10)
  if (options.exp !== null) builder = builder.setExpirationTime(options.exp ?? NOW + 300)
  if (options.iss !== null) builder = builder.setIssuer(options.iss ?? ISSUER)
  if (options.aud !== null) builder = builder.setAudience(options.aud ?? AUDIENCE)
  if (options.sub !== '') builder = builder.setSubject(options.sub ?? 'jwt-buyer')
  return builder.sign(privateKey)
}

async function build(token: string): Promise<Record<string, any>> {
  const client = new Client({ name: 'buyer', version: '1' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${agent.origin}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  )
  try {
    const result = await client.callTool({
      name: 'build_creative',
      arguments: {
        idempotency_key: `key_${crypto.randomUUID()}`,
        target_format_id: { agent_url: 'https://agent.example', id: 'x' },
      },
    })
    return result.structuredContent as Record<string, any>
  } catch (error) {
    // Refused at the HTTP layer (401 / 403): the JSON-RPC error body carries the AdCP error.
    if (!(error instanceof StreamableHTTPError)) throw error
    const body = JSON.parse(error.message.slice(error.message.indexOf('{'))) as any
    return { http_status: error.code, adcp_error: body.error.data.adcp_error }
  } finally {
    await client.close()
  }
}

describe('bearer auth', () => {
  it('hashedTokenAuth keeps no token in clear', async () => {
    const lookup = hashedTokenAuth({ 'secret-token-abc': { principal_id: 'p', permissions: {} } })
    expect(await lookup('secret-token-abc')).toEqual({ principal_id: 'p', permissions: {} })
    expect(await lookup('secret-token-abd')).toBeUndefined()
  })

  it('accepts an opaque token next to JWT verification', async () => {
    expect(await build(BUYER_TOKEN)).toHaveProperty('creative_manifest')
  })

  it('accepts a JWT whose scope grants the permission', async () => {
    expect(await build(await jwt({ scope: 'adcp:creatives' }))).toHaveProperty('creative_manifest')
    expect(await build(await jwt({ scope: 'adcp:creatives:write' }))).toHaveProperty('creative_manifest')
  })

  it('answers INSUFFICIENT_PERMISSIONS for a valid JWT without the scope', async () => {
    const refused = await build(await jwt({ scope: 'adcp:creatives:read adcp:products' }))
    expect(refused.http_status).toBe(403)
    expect(refused.adcp_error.code).toBe('INSUFFICIENT_PERMISSIONS')
  })

  it.each([
    ['expired', { exp: NOW - 120 }],
    ['from another issuer', { iss: 'https://evil.example' }],
    ['for another audience', { aud: 'https://other.example' }],
    ['without sub', { sub: '' }],
    ['without iat', { iat: null }],
    ['without exp', { exp: null }],
    ['without iss', { iss: null }],
    ['without aud', { aud: null }],
    ['issued in the future (beyond the 30 s tolerance)', { iat: NOW + 120 }],
  ])('answers AUTH_INVALID for a JWT %s', async (_name, options) => {
    const refused = await build(await jwt({ scope: 'adcp:creatives' }, options))
    expect(refused.http_status).toBe(401)
    expect(refused.adcp_error.code).toBe('AUTH_INVALID')
  })

  it.each<[string, Record<string, unknown>]>([
    ['a fractional exp', { exp: NOW + 300.5 }],
    ['a string iat', { iat: String(NOW - 10) }],
    ['an empty sub', { sub: '' }],
    ['a numeric sub', { sub: 42 }],
  ])('answers AUTH_INVALID for a JWT with %s', async (_name, override) => {
    // Registered claims set raw (the builder's setters would normalise them).
    const token = await new SignJWT({
      scope: 'adcp:creatives',
      iss: ISSUER,
      aud: AUDIENCE,
      sub: 'jwt-buyer',
      iat: NOW - 10,
      exp: NOW + 300,
      ...override,
    })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .sign(privateKey)
    expect((await build(token)).adcp_error.code).toBe('AUTH_INVALID')
  })

  it('answers AUTH_INVALID for a tampered JWT and a non-Bearer scheme', async () => {
    const token = await jwt({ scope: 'adcp:creatives' })
    expect((await build(`${token.slice(0, -4)}AAAA`)).adcp_error.code).toBe('AUTH_INVALID')
  })
})
