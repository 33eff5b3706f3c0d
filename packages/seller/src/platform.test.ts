/**
 * The ad server's calls (booking, changes, creative review) run outside any database transaction: while a slow
 * booking is pending, other buyers' calls are answered at once (on SQLite, whose one connection a transaction
 * would hold); a refusal reaches the buyer with the ad server's AdCP error and stores nothing; a failure is
 * SERVICE_UNAVAILABLE. Served on 127.0.0.1, called with the official MCP client.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AgentError } from '@adwire/agent-server'
import { mcpCall, mcpClient, newKey } from '@adwire/agent-test-kit'
import { listen, type Listener } from '@adwire/service-kit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { MediaBuyRecord } from './media-buys/types.js'
import { DEFAULT_PRINCIPAL, openSeller } from './open/open-seller.js'
import type { SellerRuntime } from './open/types.js'
import type { OrderAction, SellerPlatform } from './platform.js'
import { homepageCatalog, testSettings } from './testing/fixtures.js'

const dir = mkdtempSync(join(tmpdir(), 'adwire-seller-platform-'))
const TOKEN = 'platform-test-buyer-token-0123456789abcdef'
const OTHER = 'platform-test-other-token-0123456789abcdef'
const catalog = homepageCatalog()
/** An ad server that takes `delayMs` per call and can be told to refuse or fail the next booking. */
function slowAdServer(delayMs: number) {
  const orders = new Map<string, MediaBuyRecord>()
  const changes: { id: string; action: OrderAction }[] = []
  /** When each booking call returned (after its delay). */
  const bookedAt = new Map<string, number>()
  let next: 'refuse' | 'fail' | undefined
  const pause = () => new Promise((resolve) => setTimeout(resolve, delayMs))
  const platform: SellerPlatform = {
    async createOrder(buy) {
      await pause()
      const outcome = next
      next = undefined
      if (outcome === 'refuse')
        throw new AgentError('TERMS_REJECTED', 'the ad server refuses these terms', { status: 422 })
      if (outcome === 'fail') throw new Error('ad server timeout')
      orders.set(buy.media_buy_id, buy)
      bookedAt.set(buy.media_buy_id, Date.now())
    },
    async provisionAccount(account) {
      const domain = String(account.brand.domain)
      if (domain === 'refused.example')
        throw new AgentError('ACCOUNT_SETUP_REQUIRED', 'the ad server wants a credit check first', {
          status: 422,
        })
      return domain === 'pending.example' ? { status: 'pending_approval' as const } : undefined
    },
    async updateOrder({ after, action }) {
      await pause()
      changes.push({ id: after.media_buy_id, action })
      orders.set(after.media_buy_id, after)
    },
  }
  return {
    platform,
    orders,
    changes,
    bookedAt,
    refuseNext: () => (next = 'refuse'),
    failNext: () => (next = 'fail'),
  }
}

const adServer = slowAdServer(400)
let seller: SellerRuntime
let listener: Listener
let agent: { url: string }

beforeAll(async () => {
  listener = await listen({ port: 0 })
  seller = await openSeller({
    settings: testSettings({ allowInsecureWebhookUrls: true }),
    catalog,
    delivery: () => [],
    platform: adServer.platform,
    database: { kind: 'sqlite', path: join(dir, 'seller.sqlite') },
    publicUrl: listener.url,
    tokens: [
      { token: TOKEN, principal: { ...DEFAULT_PRINCIPAL, principal_id: 'buyer-a' } },
      { token: OTHER, principal: { ...DEFAULT_PRINCIPAL, principal_id: 'buyer-b' } },
    ],
  })
  listener.handle((request) => seller.fetch(request))
  agent = { url: listener.url }
})
afterAll(async () => {
  await listener.close()
  await seller.close()
  rmSync(dir, { recursive: true, force: true })
})

const createArgs = () => ({
  adcp_major_version: 3,
  idempotency_key: newKey(),
  account: { brand: { domain: 'acme.example' }, operator: 'acme.example' },
  brand: { domain: 'acme.example' },
  start_time: 'asap',
  end_time: new Date(Date.now() + 7 * 86_400_000).toISOString(),
  packages: [{ product_id: 'homepage', pricing_option_id: 'cpm', budget: 1000 }],
})

describe('the ad server adapter', () => {
  it('books outside any transaction: another buyer is answered while a slow booking is pending', async () => {
    const booking = mcpCall(agent, TOKEN, 'create_media_buy', createArgs())
    await new Promise((resolve) => setTimeout(resolve, 100))
    // While the ad server takes 400 ms, a write of another buyer goes through (no transaction is open).
    const other = await mcpCall(agent, OTHER, 'sync_accounts', {
      adcp_major_version: 3,
      idempotency_key: newKey(),
      accounts: [{ brand: { domain: 'other.example' }, operator: 'other.example', billing: 'operator' }],
    })
    const otherDone = Date.now()
    const created = await booking
    expect(other.isError, JSON.stringify(other.structuredContent)).toBeFalsy()
    expect(created.isError, JSON.stringify(created.structuredContent)).toBeFalsy()
    const id = (created.structuredContent as { media_buy_id: string }).media_buy_id
    expect(adServer.orders.has(id)).toBe(true)
    // The other buyer's write was stored and answered while the ad server was still booking.
    expect(otherDone).toBeLessThan(adServer.bookedAt.get(id)!)
  })

  it('passes the ad server refusal to the buyer and stores nothing', async () => {
    const before = (await seller.storage.records.list('media_buy')).length
    adServer.refuseNext()
    const refused = await mcpCall(agent, TOKEN, 'create_media_buy', createArgs())
    expect(refused.isError).toBe(true)
    expect(JSON.stringify(refused.structuredContent)).toContain('TERMS_REJECTED')
    adServer.failNext()
    const failed = await mcpCall(agent, TOKEN, 'create_media_buy', createArgs())
    expect(JSON.stringify(failed.structuredContent)).toContain('SERVICE_UNAVAILABLE')
    expect((await seller.storage.records.list('media_buy')).length).toBe(before)
  })

  it('applies pause and resume in the ad server before storing them', async () => {
    const created = await mcpCall(agent, TOKEN, 'create_media_buy', createArgs())
    const id = (created.structuredContent as { media_buy_id: string }).media_buy_id
    for (const paused of [true, false]) {
      const result = await mcpCall(agent, TOKEN, 'update_media_buy', {
        adcp_major_version: 3,
        idempotency_key: newKey(),
        account: { brand: { domain: 'acme.example' }, operator: 'acme.example' },
        media_buy_id: id,
        paused,
      })
      expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy()
    }
    expect(adServer.changes.filter((change) => change.id === id).map((change) => change.action)).toEqual([
      'pause',
      'resume',
    ])
    // An official client keeps working against the same seller.
    const client = await mcpClient(agent, TOKEN)
    await client.close()
  })

  it('provisions accounts in the ad server: its status is stored, its refusal fails that account alone', async () => {
    const result = await mcpCall(agent, TOKEN, 'sync_accounts', {
      adcp_major_version: 3,
      idempotency_key: newKey(),
      accounts: [
        { brand: { domain: 'pending.example' }, operator: 'pending.example', billing: 'operator' },
        { brand: { domain: 'refused.example' }, operator: 'refused.example', billing: 'operator' },
      ],
    })
    expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy()
    const [pending, refused] = (result.structuredContent as { accounts: Record<string, unknown>[] }).accounts
    expect(pending).toMatchObject({ action: 'created', status: 'pending_approval' })
    expect(refused).toMatchObject({ action: 'failed', status: 'rejected' })
    expect(JSON.stringify(refused)).toContain('ACCOUNT_SETUP_REQUIRED')
    const stored = (
      await seller.storage.records.list<{ brand: { domain: string }; status: string }>('account')
    ).map((record) => [record.body.brand.domain, record.body.status])
    expect(stored).toContainEqual(['pending.example', 'pending_approval'])
    expect(stored.some(([domain]) => domain === 'refused.example')).toBe(false)
  })
})
