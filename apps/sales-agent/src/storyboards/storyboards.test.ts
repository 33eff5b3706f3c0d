/**
 * The must-pass AdCP 3.1.19 storyboards of sales-agent.md (protocols/media-buy/index.yaml with its
 * requires_scenarios, protocols/media-buy/state-machine.yaml and the universal ones) run with @adwire/storyboards
 * against the sales agent over MCP (official MCP client) and over A2A (official A2A client), each transport on a
 * fresh agent, with the runner's webhook receiver verifying RFC 9421 signatures against the agent's JWKS. Every
 * step's outcome is pinned (expected-outcomes.ts): the failures that remain are listed there with their spec
 * reason, and both transports give the same outcome for every step.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { jwksResolver } from '@adwire/http-signatures'
import {
  loadBundle,
  renderReport,
  runStoryboards,
  startWebhookReceiver,
  type RunResult,
} from '@adwire/storyboards'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEnv } from '../env.js'
import { startSalesAgent, type RunningSalesAgent } from '../service.js'
import { EXPECTED_FAILURES, STEP_OUTCOMES, STORYBOARD_STATUS } from './expected-outcomes.js'

/** sales-agent.md "Must pass" (the media-buy index brings its requires_scenarios along), then the claimed specialisms. */
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
  // The two specialisms the seller claims (sales-agent.md "Should pass"); their scenarios come along.
  'specialisms/sales-non-guaranteed/index',
  'specialisms/sales-guaranteed/index',
]

/** Like a deployment: get_adcp_capabilities names identity.brand_json_url only on https. */
const PUBLIC_URL = 'https://sales.adwire.test'
const bundle = loadBundle()
const results = new Map<'mcp' | 'a2a', RunResult>()
const dirs: string[] = []

/** A fresh agent (its own SQLite file), the receiver on its keys, one run of every storyboard. */
async function run(protocol: 'mcp' | 'a2a'): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'adwire-sales-storyboards-'))
  dirs.push(dir)
  const agent: RunningSalesAgent = await startSalesAgent(
    parseEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(dir, 'sales-agent.sqlite')}`,
      PUBLIC_URL,
      // The runner's receiver listens on 127.0.0.1 over http.
      ALLOW_INSECURE_WEBHOOK_URLS: '1',
      REVIEW_SECONDS: '0',
      // The storyboards drive the test controller and authenticate with the kit keys.
      COMPLY_TEST_CONTROLLER: '1',
      TEST_KIT_CREDENTIALS: '1',
    }),
    { senderPollMs: 25 },
  )
  const webhooks = await startWebhookReceiver({ keys: jwksResolver(agent.runtime.deps.key.jwks) })
  try {
    return await runStoryboards({
      agentUrl: agent.url,
      publicUrl: PUBLIC_URL,
      protocol,
      bundle,
      storyboards: STORYBOARDS,
      webhooks,
      // The runner's default: no step waits it out when the agent conforms (a webhook step ends at the first
      // matching delivery), and a loaded machine gets the headroom the storyboards themselves allow.
      stepTimeoutMs: 30_000,
    })
  } finally {
    await webhooks.close()
    await agent.close()
  }
}

beforeAll(async () => {
  for (const protocol of ['mcp', 'a2a'] as const) results.set(protocol, await run(protocol))
}, 300_000)

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const stepsOf = (result: RunResult) =>
  result.storyboards.flatMap((storyboard) =>
    storyboard.steps.map((step) => ({ id: `${storyboard.key}#${step.step_id}`, step })),
  )

describe.each(['mcp', 'a2a'] as const)('the sales agent over %s', (protocol) => {
  it('fails exactly the steps of the expected-failure table', () => {
    const result = results.get(protocol)!
    const failed = stepsOf(result)
      .filter(({ step }) => step.status === 'failed')
      .map(({ id }) => id)
    expect(failed.sort(), renderReport(result)).toEqual(Object.keys(EXPECTED_FAILURES).sort())
  })

  it('gives every other step its pinned outcome', () => {
    const result = results.get(protocol)!
    const inapplicable = new Set(
      result.storyboards.filter((storyboard) => storyboard.status === 'not_applicable').map(({ key }) => key),
    )
    const outcomes = Object.fromEntries(
      stepsOf(result)
        .filter(({ id, step }) => step.status !== 'failed' && !inapplicable.has(id.split('#')[0]!))
        .map(({ id, step }) => [id, `${step.status}${step.skip ? ` ${step.skip.reason}` : ''}`]),
    )
    expect(outcomes).toEqual(STEP_OUTCOMES)
    // A storyboard that does not apply runs no step: each is not_applicable, citing the capability it lacks.
    for (const storyboard of result.storyboards.filter(({ key }) => inapplicable.has(key))) {
      expect(storyboard.skip?.detail).toMatch(/requires_capability|does not claim/)
      for (const step of storyboard.steps) expect(step.status).toBe('not_applicable')
    }
  })

  it('passes media_buy_seller, its scenarios that apply, the state machine, the universal storyboards and the claimed specialisms', () => {
    const result = results.get(protocol)!
    expect(
      Object.fromEntries(result.storyboards.map((storyboard) => [storyboard.key, storyboard.status])),
    ).toEqual(STORYBOARD_STATUS)
    for (const key of [
      'protocols/media-buy/index',
      'protocols/media-buy/state-machine',
      'specialisms/sales-non-guaranteed/index',
      'specialisms/sales-guaranteed/index',
    ])
      expect(result.storyboards.find((storyboard) => storyboard.key === key)!.status).toBe('passed')
    expect(result.timed_out).toBe(false)
  })

  it('skips only for reasons the bundle defines, each with its detail', () => {
    for (const { id, step } of stepsOf(results.get(protocol)!)) {
      if (step.status !== 'skipped' && step.status !== 'not_applicable') continue
      expect(step.skip?.detail, id).toBeTruthy()
    }
  })
})

describe('both transports', () => {
  it('give the same outcome for every step', () => {
    const outcome = (result: RunResult) =>
      stepsOf(result).map(({ id, step }) => `${id} ${step.status}${step.skip ? ` ${step.skip.reason}` : ''}`)
    expect(outcome(results.get('a2a')!)).toEqual(outcome(results.get('mcp')!))
  })

  it("complete webhook-emission's partial create_media_buy triggers from the agent's own products", () => {
    for (const protocol of ['mcp', 'a2a'] as const) {
      const steps = results
        .get(protocol)!
        .storyboards.find((storyboard) => storyboard.key === 'universal/webhook-emission')!.steps
      const triggers = steps.filter((step) => step.task === 'create_media_buy')
      expect(triggers.map((step) => step.step_id)).toEqual([
        'trigger_webhook_operation',
        'trigger_operation_id_echo',
        'trigger_idempotent_webhook_initial',
        'trigger_idempotent_webhook_replay',
        'trigger_retry_scenario',
        'trigger_signed_webhook',
      ])
      for (const step of triggers) {
        expect(step.request_completion?.fields).toEqual([
          'brand',
          'account',
          'start_time',
          'end_time',
          'packages',
        ])
        const request = step.request as {
          account: unknown
          packages: { product_id: string }[]
          push_notification_config: { operation_id: string }
        }
        expect(request.account).toEqual({
          brand: { domain: 'acmeoutdoor.example' },
          operator: 'acmeoutdoor.example',
          sandbox: true,
        })
        // A guaranteed product: the buy goes through the seller's review, whose statuses are pushed.
        expect(request.packages[0]!.product_id).toBe('summit_sports_preroll')
        expect((step.response as { status?: string }).status).toBe('submitted')
      }
      // The replay sends the initial request's bytes (but its own context) and gets the cached answer.
      const [initial, replay] = [
        'trigger_idempotent_webhook_initial',
        'trigger_idempotent_webhook_replay',
      ].map((id) => triggers.find((step) => step.step_id === id)!)
      const { context: _a, ...initialBody } = initial!.request as Record<string, unknown>
      const { context: _b, ...replayBody } = replay!.request as Record<string, unknown>
      expect(replayBody).toEqual(initialBody)
    }
  })

  it('find the webhook-signing key through brand.json (webhook-emission signing_keys_published)', () => {
    for (const protocol of ['mcp', 'a2a'] as const) {
      const steps = results
        .get(protocol)!
        .storyboards.find((storyboard) => storyboard.key === 'universal/webhook-emission')!.steps
      const byId = Object.fromEntries(steps.map((step) => [step.step_id, step.status]))
      expect(byId.fetch_brand_json).toBe('passed')
      expect(byId.assert_webhook_signing_key_present).toBe('passed')
    }
  })
})
