/**
 * A reporting_webhook's reporting_frequency must be supported by every product of the buy
 * (core/reporting-webhook.json): the demo products report hourly and daily, so monthly is refused with
 * UNSUPPORTED_FEATURE naming the field and the supported frequencies, at create and at update, and nothing is
 * stored; capabilities list what the catalog supports.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import { LEGACY_SECRET, startBuyerReceiver } from '../testing/buyer-receiver.js'
import {
  ACCOUNT,
  BUYER_TOKEN,
  buyRequest,
  displayCreative,
  mcpFails,
  mcpOk,
  newKey,
  startTestAgent,
} from '../test-support.js'

const CREATE = 'media-buy/create-media-buy-response.json'
let agent: RunningSalesAgent

beforeAll(async () => {
  agent = await startTestAgent({ PUBLIC_URL: 'https://sales.adwire.test' })
})
afterAll(() => agent.close())

const webhook = (reporting_frequency: string) => ({
  url: 'http://127.0.0.1:9/report',
  authentication: { schemes: ['HMAC-SHA256'], credentials: 'x'.repeat(40) },
  reporting_frequency,
})

it('refuses a frequency a product does not support, at create and at update; accepts a supported one', async () => {
  const caps = await mcpOk(
    agent,
    undefined,
    'get_adcp_capabilities',
    {},
    'protocol/get-adcp-capabilities-response.json',
  )
  expect(caps.media_buy.reporting_capabilities.available_reporting_frequencies).toEqual(['hourly', 'daily'])
  const before = await mcpOk(
    agent,
    BUYER_TOKEN,
    'get_media_buys',
    {},
    'media-buy/get-media-buys-response.json',
  )
  const refused = await mcpFails(
    agent,
    BUYER_TOKEN,
    'create_media_buy',
    buyRequest({ reporting_webhook: webhook('monthly') }),
    'UNSUPPORTED_FEATURE',
  )
  expect(refused.field).toBe('reporting_webhook.reporting_frequency')
  expect(refused.details).toEqual({ supported_frequencies: ['hourly', 'daily'] })
  const after = await mcpOk(
    agent,
    BUYER_TOKEN,
    'get_media_buys',
    {},
    'media-buy/get-media-buys-response.json',
  )
  expect(after.media_buys.length).toBe(before.media_buys.length)

  const created = await mcpOk(
    agent,
    BUYER_TOKEN,
    'create_media_buy',
    buyRequest({ reporting_webhook: webhook('hourly') }),
    CREATE,
  )
  const update = await mcpFails(
    agent,
    BUYER_TOKEN,
    'update_media_buy',
    {
      idempotency_key: newKey(),
      account: ACCOUNT,
      media_buy_id: created.media_buy_id,
      reporting_webhook: webhook('monthly'),
    },
    'UNSUPPORTED_FEATURE',
  )
  expect(update.field).toBe('reporting_webhook.reporting_frequency')
})

it('DEMO_REPORT_SECONDS brings a scheduled report within seconds, whatever the registered frequency', async () => {
  const demo = await startTestAgent({ DEMO_REPORT_SECONDS: '2' })
  const buyer = await startBuyerReceiver(demo.url)
  try {
    await mcpOk(
      demo,
      BUYER_TOKEN,
      'sync_creatives',
      { idempotency_key: newKey(), account: ACCOUNT, creatives: [displayCreative('demo_creative')] },
      'creative/sync-creatives-response.json',
    )
    const created = await mcpOk(
      demo,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest(
        {
          reporting_webhook: {
            url: `${buyer.origin}/hmac/mcp/demo-reports`,
            reporting_frequency: 'daily',
            authentication: { schemes: ['HMAC-SHA256'], credentials: LEGACY_SECRET },
          },
        },
        { creative_assignments: [{ creative_id: 'demo_creative' }] },
      ),
      CREATE,
    )
    await buyer.waitFor(
      (events) =>
        events.some(
          (event) =>
            (event.payload.result as { notification_type?: string } | undefined)?.notification_type ===
            'scheduled',
        ),
      20_000,
    )
    expect(created.media_buy_id).toBeTypeOf('string')
  } finally {
    await demo.close()
    await buyer.close()
  }
})
