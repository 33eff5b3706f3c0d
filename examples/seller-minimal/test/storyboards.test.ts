/**
 * The minimal seller for real (its `start` script, on 127.0.0.1, its own SQLite file) against the must-pass
 * AdCP 3.1.19 media-buy storyboards of the sales agent (protocols/media-buy with its scenarios, the state
 * machine, the universal storyboards, the two claimed specialisms) over MCP, with the runner's webhook receiver
 * verifying RFC 9421 signatures against the seller's JWKS. Nothing fails but the optional branches the seller
 * does not take (listed with their reason).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startExample, type RunningExample } from '@adwire/example-kit'
import { jwksResolver } from '@adwire/http-signatures'
import { renderReport, runStoryboards, startWebhookReceiver, type RunResult } from '@adwire/storyboards'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const STORYBOARDS = [
  'protocols/media-buy/index',
  'protocols/media-buy/state-machine',
  'universal/capability-discovery',
  'universal/v3-envelope-integrity',
  'universal/version-negotiation',
  'universal/error-compliance',
  'universal/schema-validation',
  'universal/idempotency',
  'universal/read-tool-idempotency',
  'universal/deterministic-testing',
  'universal/comply-controller-mode-gate',
  'universal/webhook-emission',
  'universal/notification-config-lifecycle',
  'universal/notification-config-event-scope',
  'universal/notification-config-rejections',
  'universal/pagination-integrity',
  'universal/get-media-buys-pagination-integrity',
  'universal/get-products-pagination-integrity',
  'universal/pagination-integrity-creative-formats',
  'universal/pagination-integrity-list-accounts',
  'universal/security',
  'universal/billing-gate-dispatch',
  'universal/stale-response-advisory',
  'specialisms/sales-non-guaranteed/index',
  'specialisms/sales-guaranteed/index',
]

/** The steps that fail, each an optional branch or phase the seller does not take. */
const EXPECTED_FAILURES: Readonly<Record<string, string>> = {
  'universal/read-tool-idempotency#get_capabilities_without_idempotency_key_3_1_reject':
    'optional branch (any_of): the seller serves a read without idempotency_key (the 3.1 accept path, which passes)',
  'universal/webhook-emission#sync_get_products_with_webhook_config_reject':
    'optional branch (any_of): get_products completes synchronously and ignores push_notification_config (the success path, which passes)',
  'universal/security#probe_protected_resource':
    'optional phase oauth_discovery: bearer keys, no OAuth issuer, so no RFC 9728 metadata (the api_key path passes)',
}

/** get_adcp_capabilities names identity.brand_json_url only on https, as a deployment would be. */
const PUBLIC_URL = 'https://seller-minimal.example'
const dir = mkdtempSync(join(tmpdir(), 'adwire-seller-minimal-'))
let seller: RunningExample
let result: RunResult

beforeAll(async () => {
  seller = await startExample(fileURLToPath(new URL('..', import.meta.url)), {
    DATA_DIR: dir,
    PUBLIC_URL,
    REVIEW_SECONDS: '0',
    // The storyboards drive the test controller with the test-kit keys; the receiver is http on 127.0.0.1.
    COMPLY_TEST_CONTROLLER: '1',
    TEST_KIT_CREDENTIALS: '1',
    ALLOW_INSECURE_WEBHOOK_URLS: '1',
  })
  const jwks = (await (await fetch(`${seller.origin}/.well-known/jwks.json`)).json()) as never
  const webhooks = await startWebhookReceiver({ keys: jwksResolver(jwks) })
  try {
    result = await runStoryboards({
      agentUrl: seller.origin,
      publicUrl: PUBLIC_URL,
      protocol: 'mcp',
      storyboards: STORYBOARDS,
      webhooks,
      stepTimeoutMs: 30_000,
    })
  } finally {
    await webhooks.close()
  }
}, 300_000)

afterAll(async () => {
  await seller?.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe('the minimal seller over MCP', () => {
  it('fails only the optional branches it does not take', () => {
    const failed = result.storyboards.flatMap((storyboard) =>
      storyboard.steps
        .filter((step) => step.status === 'failed')
        .map((step) => `${storyboard.key}#${step.step_id}`),
    )
    expect(failed.sort(), renderReport(result)).toEqual(Object.keys(EXPECTED_FAILURES).sort())
  })

  it('passes every storyboard it was given, and fails none of the scenarios they bring', () => {
    const status = Object.fromEntries(result.storyboards.map(({ key, status }) => [key, status]))
    for (const key of STORYBOARDS) expect(status[key], key).toBe('passed')
    expect(result.summary.storyboards.failed, renderReport(result)).toBe(0)
    expect(result.timed_out).toBe(false)
  })
})
