/**
 * Helpers for this app's service tests (not part of the build): the agent on a temporary SQLite file listening
 * on 127.0.0.1 port 0 and the buys the tests make; the calls through the official MCP and A2A clients and the
 * official-schema check come from `@adwire/agent-test-kit`.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { newKey, type Body } from '@adwire/agent-test-kit'
import { parseEnv } from './env.js'
import { startSalesAgent, type RunningSalesAgent, type StartOptions } from './service.js'

export * from '@adwire/agent-test-kit'

export const BUYER_TOKEN = 'buyer-token-for-sales-tests-0123456789'
export const READER_TOKEN = 'reader-token-for-sales-tests-0123456789'
export const TOKENS = `buyer-1:${BUYER_TOKEN}:read+write+delete+approve,reader-1:${READER_TOKEN}:read`
/** The official acme-outdoor test-kit keys (sandbox and live). */
export const KIT_SANDBOX = 'demo-acme-outdoor-v1'
export const KIT_LIVE = 'demo-acme-outdoor-live-v1'

export const tempDir = (prefix = 'adwire-sales-') => mkdtempSync(join(tmpdir(), prefix))

/** The agent on 127.0.0.1, port 0, a fresh SQLite file, the test tokens, local webhooks allowed. */
export async function startTestAgent(
  env: Record<string, string> = {},
  options: StartOptions = {},
): Promise<RunningSalesAgent> {
  return startSalesAgent(
    parseEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(tempDir(), 'sales-agent.sqlite')}`,
      TOKENS,
      ALLOW_INSECURE_WEBHOOK_URLS: '1',
      REVIEW_SECONDS: '0',
      // The suites drive the test controller and the kit keys; security.test.ts covers both off.
      COMPLY_TEST_CONTROLLER: '1',
      TEST_KIT_CREDENTIALS: '1',
      ...env,
    }),
    { senderPollMs: 25, dueTickMs: 50, ...options },
  )
}

/** The natural-key account the tests buy on (acme-outdoor, as the storyboards). */
export const ACCOUNT = { brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle-agency.example' }

/** A display creative in a format of the creative agent's catalog. */
export function displayCreative(creativeId: string): Body {
  return {
    creative_id: creativeId,
    name: `Creative ${creativeId}`,
    format_id: { agent_url: 'http://127.0.0.1:4200', id: 'display_300x250_image' },
    assets: {
      image: { asset_type: 'image', url: 'https://cdn.example/a.png', width: 300, height: 250 },
    },
  }
}

/** A create_media_buy request on the Trailhead display product (CPM auction, floor 6). */
export function buyRequest(extra: Body = {}, packageExtra: Body = {}): Body {
  return {
    idempotency_key: newKey(),
    account: ACCOUNT,
    brand: { domain: 'acmeoutdoor.example' },
    start_time: 'asap',
    end_time: '2099-06-30T23:59:59Z',
    packages: [
      {
        product_id: 'trailhead_lifestyle_display',
        pricing_option_id: 'cpm_standard',
        budget: 5000,
        bid_price: 7,
        ...packageExtra,
      },
    ],
    ...extra,
  }
}
