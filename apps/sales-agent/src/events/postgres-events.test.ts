/**
 * Two sales agents (two instances, each with its sender and report scheduler) on one PostgreSQL schema: their
 * schedulers race on the same due buys and the outbox is shared, yet each scheduled report goes once with its
 * own sequence number, the final report once and last, and the buyer's receiver publishes each exactly once.
 */
import { dropSchema, freshSchemaName, resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import {
  ACCOUNT,
  BUYER_TOKEN,
  buyRequest,
  displayCreative,
  mcpOk,
  newKey,
  startTestAgent,
} from '../test-support.js'
import { LEGACY_SECRET, startBuyerReceiver, type BuyerReceiver } from '../testing/buyer-receiver.js'
import type { WebhookEvents } from '@adwire/seller'

const url = await resolveTestPostgresUrl()
const schema = freshSchemaName('sales_events')
let offset = 0
const now = () => Date.now() / 1000 + offset
let first: RunningSalesAgent
let second: RunningSalesAgent
let buyer: BuyerReceiver

describe.skipIf(!url)('webhook events from two instances on one PostgreSQL schema', () => {
  beforeAll(async () => {
    const env = { DATABASE_URL: url!, DATABASE_SCHEMA: schema, PUBLIC_URL: 'https://sales.pg-events.test' }
    const options = { now, reportPeriodSeconds: 3600, reportTickMs: 3_600_000, tickSeconds: 0 }
    first = await startTestAgent(env, options)
    second = await startTestAgent(env, options)
    buyer = await startBuyerReceiver(first.url, now)
  })

  afterAll(async () => {
    await first?.close()
    await second?.close()
    await buyer?.close()
    await dropSchema(url!, schema)
  })

  it('racing schedulers send each report once, in sequence; the final report once, last', async () => {
    await mcpOk(
      first,
      BUYER_TOKEN,
      'sync_creatives',
      { idempotency_key: newKey(), account: ACCOUNT, creatives: [displayCreative('pg_events')] },
      'creative/sync-creatives-response.json',
    )
    const created = await mcpOk(
      first,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest(
        {
          reporting_webhook: {
            url: `${buyer.origin}/hmac/mcp/pg-reports`,
            reporting_frequency: 'hourly',
            authentication: { schemes: ['HMAC-SHA256'], credentials: LEGACY_SECRET },
          },
        },
        { creative_assignments: [{ creative_id: 'pg_events' }] },
      ),
      'media-buy/create-media-buy-response.json',
    )
    const tick = (agent: RunningSalesAgent) => (agent.runtime.deps.events as WebhookEvents).tick()
    const reports = () => buyer.published.filter((event) => event.registrationId === 'hmac-mcp-pg-reports')
    for (let round = 1; round <= 3; round++) {
      offset += 3601
      const sent = await Promise.all([tick(first), tick(second), tick(first), tick(second)])
      expect(sent.reduce((sum, count) => sum + count, 0)).toBe(1)
      await buyer.waitFor(() => reports().length === round)
    }
    await mcpOk(
      second,
      BUYER_TOKEN,
      'update_media_buy',
      { idempotency_key: newKey(), account: ACCOUNT, media_buy_id: created.media_buy_id, canceled: true },
      'media-buy/update-media-buy-response.json',
    )
    await buyer.waitFor(() => reports().length === 4)
    offset += 3601
    await Promise.all([tick(first), tick(second)])
    await Promise.all([first.runtime.deps.sender.drain(), second.runtime.deps.sender.drain()])
    const results = reports().map((event) => event.payload.result as Record<string, unknown>)
    expect(results.map((result) => [result.notification_type, result.sequence_number])).toEqual([
      ['scheduled', 1],
      ['scheduled', 2],
      ['scheduled', 3],
      ['final', 4],
    ])
  })
})
