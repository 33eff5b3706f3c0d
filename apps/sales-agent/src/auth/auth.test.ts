/**
 * Authentication and authorisation through the official MCP client: TOKENS with per-area permissions
 * (INSUFFICIENT_PERMISSIONS when an area or a permission is missing: reports:read for delivery,
 * media_buys:delete for a cancel), JWT bearer tokens with a permissions claim, the official test-kit keys (any
 * suffix after the kit's handle) and TEST_KIT_CREDENTIALS=0 turning them off, and the environment's
 * refusals of malformed TOKENS.
 */
import { SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EnvError, parseEnv, parsePermissions } from '../env.js'
import type { RunningSalesAgent } from '../service.js'
import { ACCOUNT, BUYER_TOKEN, buyRequest, mcpFails, mcpOk, newKey, startTestAgent } from '../test-support.js'

const SECRET = 'jwt-secret-for-sales-agent-tests-0123456789'
const NO_REPORTS = 'no-reports-token-for-sales-tests-0123456789'
const NO_DELETE = 'no-delete-token-for-sales-tests-01234567890'
let agent: RunningSalesAgent

beforeAll(async () => {
  agent = await startTestAgent({
    TOKENS: [
      `buyer-1:${BUYER_TOKEN}:read+write+delete`,
      `planner:${NO_REPORTS}:products.read+media_buys.read+media_buys.write`,
      `trader:${NO_DELETE}:media_buys.read+media_buys.write+reports.read`,
    ].join(','),
    JWT_SECRET: SECRET,
    JWT_ISSUER: 'https://issuer.example',
    JWT_AUDIENCE: 'adwire-sales-agent',
  })
})
afterAll(() => agent.close())

const jwt = (claims: Record<string, unknown>) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('jwt-buyer')
    .setIssuer('https://issuer.example')
    .setAudience('adwire-sales-agent')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(SECRET))

describe('per-area permissions', () => {
  it('answers INSUFFICIENT_PERMISSIONS for a missing area or permission', async () => {
    await mcpFails(agent, NO_REPORTS, 'get_media_buy_delivery', {}, 'INSUFFICIENT_PERMISSIONS')
    const buy = await mcpOk(
      agent,
      NO_DELETE,
      'create_media_buy',
      buyRequest(),
      'media-buy/create-media-buy-response.json',
    )
    await mcpFails(
      agent,
      NO_DELETE,
      'update_media_buy',
      { idempotency_key: newKey(), account: ACCOUNT, media_buy_id: buy.media_buy_id, canceled: true },
      'INSUFFICIENT_PERMISSIONS',
    )
    await mcpFails(
      agent,
      NO_DELETE,
      'sync_creatives',
      { idempotency_key: newKey(), account: ACCOUNT, creatives: [] },
      'INSUFFICIENT_PERMISSIONS',
    )
    await mcpFails(agent, 'not-a-token-anyone-issued-0000000', 'get_media_buys', {}, 'AUTH_INVALID')
  })

  it('parses permission text per area', () => {
    expect(parsePermissions('read')).toEqual({
      products: ['read'],
      media_buys: ['read'],
      creatives: ['read'],
      reports: ['read'],
    })
    expect(parsePermissions('reports.read+media_buys.write')).toEqual({
      reports: ['read'],
      media_buys: ['write'],
    })
    expect(parsePermissions('reports.fly')).toBeUndefined()
    expect(() => parseEnv({ TOKENS: 'buyer:short' })).toThrow(EnvError)
    expect(() => parseEnv({ TOKENS: `buyer:${BUYER_TOKEN}:owners.read` })).toThrow(/permissions/)
  })
})

describe('JWT bearer tokens', () => {
  it('accepts a signed token with a permissions claim and refuses a bad audience', async () => {
    const token = await jwt({ permissions: { media_buys: ['read'] } })
    const listed = await mcpOk(agent, token, 'get_media_buys', {}, 'media-buy/get-media-buys-response.json')
    expect(listed.media_buys).toEqual([])
    await mcpFails(agent, token, 'create_media_buy', buyRequest(), 'INSUFFICIENT_PERMISSIONS')
    const wrong = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('x')
      .setIssuer('https://issuer.example')
      .setAudience('someone-else')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(SECRET))
    await mcpFails(agent, wrong, 'get_media_buys', {}, 'AUTH_INVALID')
  })
})

describe('test-kit credentials', () => {
  it('accept any key under a kit handle, and can be turned off', async () => {
    await mcpOk(agent, 'demo-acme-outdoor-v2', 'get_media_buys', {}, 'media-buy/get-media-buys-response.json')
    const off = await startTestAgent({ TEST_KIT_CREDENTIALS: '0' })
    try {
      await mcpFails(off, 'demo-acme-outdoor-v1', 'get_media_buys', {}, 'AUTH_INVALID')
    } finally {
      await off.close()
    }
  })
})
