/**
 * The AdCP 3.1.19 compliance storyboards that apply to the creative agent, read from the vendored bundle and
 * run as acceptance tests against the running agent: one describe per storyboard file, one test per step
 * (named after the step id), over MCP (official MCP client) and over A2A (official A2A client).
 *
 * Every storyboard file of the scanned bundle folders is either run or listed as not applicable with a
 * reason that is re-checked against the running agent; every step that is not run is listed with its reason,
 * also re-checked. A new file in the bundle, or a changed agent, fails the bookkeeping tests below.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { conformancePath } from '@adwire/conformance'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { parseEnv } from '../env.js'
import { startCreativeAgent, type RunningCreativeAgent } from '../service.js'
import { SUPPORTED_CHECKS } from './checks.js'
import { COMPLIANCE_FOLDER, listStoryboardFiles, loadStoryboard } from './load.js'
import { describeFailures, StoryboardRun } from './runner.js'
import { a2aCaller, mcpCaller, type TaskCaller, type TransportName } from './transport.js'
import type { Storyboard } from './types.js'

/** The bundle folders whose storyboards are accounted for here. */
const SCANNED_FOLDERS = ['universal', 'protocols/creative', 'specialisms'] as const

/** What the reasons below are checked against: the running agent's advertised tasks and capabilities. */
interface AgentFacts {
  tasks: readonly string[]
  capabilities: Record<string, unknown>
}

interface Reason {
  reason: string
  /** True when the reason holds for the running agent. */
  holds: (facts: AgentFacts) => boolean
}

const offersNone =
  (...tasks: string[]) =>
  (facts: AgentFacts): boolean =>
    tasks.every((task) => !facts.tasks.includes(task))
const notOffered = (...tasks: string[]): Reason => ({
  reason: `the agent offers none of ${tasks.join(', ')}`,
  holds: offersNone(...tasks),
})
const always = (reason: string): Reason => ({ reason, holds: () => true })
const specialismsOf = (facts: AgentFacts): string[] =>
  Array.isArray(facts.capabilities.specialisms) ? (facts.capabilities.specialisms as string[]) : []

/** The storyboards run against the agent. */
const RUN: readonly string[] = [
  'universal/capability-discovery.yaml',
  'universal/error-compliance.yaml',
  'universal/idempotency.yaml',
  'universal/pagination-integrity-creative-formats.yaml',
  'universal/schema-validation.yaml',
  'protocols/creative/index.yaml',
  'protocols/creative/scenarios/canonical_supported_formats.yaml',
  'specialisms/creative-template/index.yaml',
  'specialisms/creative-generative/index.yaml',
]

/** The specialisms whose storyboards are run: exactly the ones the agent claims (asserted below). */
const CLAIMED_SPECIALISMS = ['creative-generative', 'creative-template']

const OUT_OF_SCOPE =
  'applies to every agent but is not one of the universal storyboards this acceptance suite covers (issue 6 names capability-discovery, error-compliance, idempotency, pagination-integrity-creative-formats, schema-validation)'

/** Storyboard files of the scanned folders that are not run, and why. Specialism folders are handled below. */
const NOT_APPLICABLE: Readonly<Record<string, Reason>> = {
  'universal/billing-gate-dispatch.yaml': notOffered('sync_accounts'),
  'universal/canonical-format-validate-input.yaml': notOffered('validate_input', 'comply_test_controller'),
  'universal/collection-lists-pagination-integrity.yaml': notOffered('list_collection_lists'),
  'universal/comply-controller-mode-gate.yaml': notOffered('comply_test_controller'),
  'universal/content-standards-pagination-integrity.yaml': notOffered('list_content_standards'),
  'universal/deterministic-testing.yaml': notOffered('comply_test_controller'),
  'universal/error-compliance-signals.yaml': notOffered('get_signals', 'activate_signal'),
  'universal/fictional-entities.yaml': always('reference data (the test-kit entities), not a storyboard'),
  'universal/get-media-buys-pagination-integrity.yaml': notOffered('get_media_buys'),
  'universal/get-products-pagination-integrity.yaml': notOffered('get_products'),
  'universal/get-signals-pagination-integrity.yaml': notOffered('get_signals'),
  'universal/notification-config-event-scope.yaml': notOffered('sync_accounts'),
  'universal/notification-config-lifecycle.yaml': notOffered('sync_accounts', 'list_accounts'),
  'universal/notification-config-rejections.yaml': notOffered('sync_accounts'),
  'universal/pagination-integrity-list-accounts.yaml': notOffered('list_accounts'),
  'universal/pagination-integrity.yaml': notOffered('list_creatives'),
  'universal/property-lists-pagination-integrity.yaml': notOffered('list_property_lists'),
  'universal/read-tool-idempotency.yaml': always(OUT_OF_SCOPE),
  'universal/runner-output-contract.yaml': always(
    'the runner output contract (a document), not a storyboard',
  ),
  'universal/schema-validation-signals.yaml': notOffered('get_signals'),
  'universal/security.yaml': always(OUT_OF_SCOPE),
  'universal/signed-requests.yaml': always(
    `${OUT_OF_SCOPE}; its phases are synthesized by a runner from the request-signing vectors`,
  ),
  'universal/stale-response-advisory.yaml': notOffered('get_products'),
  'universal/storyboard-schema.yaml': always('the storyboard format (a document), not a storyboard'),
  'universal/v3-envelope-integrity.yaml': always(OUT_OF_SCOPE),
  'universal/version-negotiation.yaml': always(OUT_OF_SCOPE),
  'universal/webhook-emission.yaml': always(
    `${OUT_OF_SCOPE}; it needs a runner-hosted webhook receiver (requires: webhook_receiver)`,
  ),
  'universal/webhook-receiver-envelope.yaml': always('grades buyer-side webhook receivers, not agents'),
  'universal/wholesale-feed-bulk-webhooks.yaml': notOffered('sync_accounts'),
  'universal/wholesale-feed-product-webhooks.yaml': notOffered('sync_accounts'),
  'universal/wholesale-feed-products.yaml': notOffered('get_products'),
  'universal/wholesale-feed-signal-webhooks.yaml': notOffered('sync_accounts'),
  'universal/wholesale-feed-signals.yaml': notOffered('get_signals'),
  'protocols/creative/scenarios/billing_out_of_band.yaml': notOffered('report_usage'),
  'protocols/creative/scenarios/creative_lifecycle_webhooks.yaml': notOffered(
    'sync_accounts',
    'sync_creatives',
    'list_creatives',
    'comply_test_controller',
  ),
  'protocols/creative/scenarios/evaluator_auth.yaml': {
    reason:
      'the agent does not advertise creative.supports_evaluator (every phase after discovery is gated on it)',
    holds: (facts) =>
      (facts.capabilities.creative as Record<string, unknown> | undefined)?.supports_evaluator !== true,
  },
  'protocols/creative/scenarios/native_in_feed.yaml': notOffered('sync_creatives'),
  'specialisms/creative-generative/generative-seller.yaml': notOffered(
    'sync_governance',
    'get_products',
    'create_media_buy',
    'sync_creatives',
    'get_media_buy_delivery',
  ),
}

/** Why a file of `specialisms/<id>/` is not run: the agent does not claim `<id>`. */
function specialismReason(file: string): Reason | undefined {
  const id = /^specialisms\/([^/]+)\//.exec(file)?.[1]
  if (!id || CLAIMED_SPECIALISMS.includes(id)) return undefined
  return {
    reason: `the agent does not claim the ${id} specialism`,
    holds: (facts) => !specialismsOf(facts).includes(id),
  }
}

const NOT_RUN_MEDIA_BUY = notOffered('create_media_buy', 'get_products', 'get_media_buys')

/**
 * Steps not run, keyed `file#phase/step`, with the reason (re-checked against the agent). Everything else in a
 * run storyboard is run.
 */
const SKIPPED_STEPS: Readonly<Record<string, Reason>> = {
  ...Object.fromEntries(
    [
      'error_responses/negative_budget',
      'error_responses/nonexistent_product',
      'error_responses/missing_fields',
      'error_responses/reversed_dates_error',
      'error_structure/validate_error_shape',
      'version_negotiation/unsupported_major_version',
      'version_negotiation/unsupported_release_version',
      'version_negotiation/supported_major_version',
      'error_transport/validate_transport_binding',
    ].map((step) => [`universal/error-compliance.yaml#${step}`, NOT_RUN_MEDIA_BUY]),
  ),
  ...Object.fromEntries(
    [
      'missing_key/create_media_buy_missing_key',
      'replay_same_payload/create_media_buy_initial',
      'replay_same_payload/create_media_buy_replay',
      'replay_same_payload/create_media_buy_conflict',
      'fresh_key_new_resource/create_media_buy_fresh_key',
      'concurrent_retry/create_media_buy_concurrent',
      'verify_media_buy_count/get_media_buys_dedup_check',
      'rate_limit_replay_invariant/expect_rate_limit_not_replayed',
    ].map((step) => [`universal/idempotency.yaml#${step}`, NOT_RUN_MEDIA_BUY]),
  ),
  'universal/pagination-integrity-creative-formats.yaml#seed_formats/seed_format_1':
    notOffered('comply_test_controller'),
  'universal/pagination-integrity-creative-formats.yaml#seed_formats/seed_format_2':
    notOffered('comply_test_controller'),
  'universal/pagination-integrity-creative-formats.yaml#pagination_walk/first_page': {
    reason:
      'walks the two formats the controller seeds; the agent offers no comply_test_controller to seed them',
    holds: offersNone('comply_test_controller'),
  },
  'universal/pagination-integrity-creative-formats.yaml#pagination_walk/terminal_page': {
    reason: 'follows the cursor of first_page over the controller-seeded formats (see first_page)',
    holds: offersNone('comply_test_controller'),
  },
  ...Object.fromEntries(
    [
      'schema_compliance/get_products_schema',
      'schema_compliance/pricing_options_present',
      'format_id_reconciliation/get_products_for_formats',
      'temporal_validation/reversed_dates',
      'past_start_rejection/create_buy_past_start_reject',
    ].map((step) => [`universal/schema-validation.yaml#${step}`, NOT_RUN_MEDIA_BUY]),
  ),
  'universal/schema-validation.yaml#format_id_reconciliation/list_formats_match': {
    reason:
      'its request and expected format_id are $context.product_format_id, captured from get_products, which the agent does not offer',
    holds: offersNone('get_products'),
  },
  'protocols/creative/index.yaml#sync_multiple/sync_creatives': notOffered('sync_creatives'),
  'protocols/creative/index.yaml#list_and_filter/list_all': notOffered('list_creatives'),
  'protocols/creative/index.yaml#list_and_filter/list_filtered': notOffered('list_creatives'),
  'specialisms/creative-generative/index.yaml#catalog_augmented_generation/sync_generation_catalog':
    notOffered('sync_catalogs'),
  'specialisms/creative-generative/index.yaml#catalog_augmented_generation/build_catalog_aware_creative': {
    reason: 'builds against the catalog synced by sync_catalogs; the phase is not applicable without it',
    holds: offersNone('sync_catalogs'),
  },
  'specialisms/creative-generative/index.yaml#catalog_substitution_safety/sync_substitution_probe_catalog':
    notOffered('sync_catalogs'),
  'specialisms/creative-generative/index.yaml#catalog_substitution_safety/build_substitution_probe_creative':
    {
      reason:
        'builds against the probe catalog synced by sync_catalogs; the phase is not applicable without it',
      holds: offersNone('sync_catalogs'),
    },
  'specialisms/creative-generative/index.yaml#catalog_substitution_safety/expect_substitution_safe': {
    reason:
      'needs the substitution_observer_runner contract and the probe catalog (sync_catalogs), neither of which is available',
    holds: offersNone('sync_catalogs'),
  },
}

const stepKey = (file: string, phase: string, step: string): string => `${file}#${phase}/${step}`

const storyboards = new Map<string, Storyboard>(RUN.map((file) => [file, loadStoryboard(file)]))

/** The storyboards' test kit; its `auth.api_key` is the bearer the buyer calls with. */
const testKit = parse(
  readFileSync(conformancePath(COMPLIANCE_FOLDER, 'test-kits/acme-outdoor.yaml'), 'utf8'),
) as { supports_audio_formats?: boolean; auth: { api_key: string } }

/** The agent's public base URL (what format_id agent_url carries); the tests reach it on 127.0.0.1. */
const PUBLIC_URL = 'https://creative-agent.adwire.test'

let agent: RunningCreativeAgent
let dataDir: string
const callers = new Map<TransportName, TaskCaller>()
let facts: AgentFacts

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'adwire-storyboards-'))
  agent = await startCreativeAgent(
    parseEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(dataDir, 'creative-agent.sqlite')}`,
      TOKENS: `acme-outdoor-buyer:${testKit.auth.api_key}:read+write`,
      // Like a deployment: get_adcp_capabilities requires identity.brand_json_url to be https.
      PUBLIC_URL: PUBLIC_URL,
    }),
  )
  const token = testKit.auth.api_key
  callers.set('mcp', await mcpCaller(agent.url, { token }))
  callers.set(
    'a2a',
    await a2aCaller(agent.url, { token, route: { publicOrigin: PUBLIC_URL, localOrigin: agent.url } }),
  )
  const mcp = callers.get('mcp')!
  const capabilities = await mcp.call('get_adcp_capabilities', {})
  facts = { tasks: await mcp.tasks(), capabilities: capabilities.body ?? {} }
})

afterAll(async () => {
  for (const caller of callers.values()) await caller.close()
  await agent?.close()
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
})

describe('the storyboards run', () => {
  it('are exactly the applicable storyboard files of the bundle (a new file is noticed)', () => {
    const files = listStoryboardFiles(SCANNED_FOLDERS)
    const unaccounted = files.filter(
      (file) => !RUN.includes(file) && !(file in NOT_APPLICABLE) && !specialismReason(file),
    )
    expect(unaccounted).toEqual([])
    expect(RUN.filter((file) => file in NOT_APPLICABLE || specialismReason(file))).toEqual([])
    expect([...RUN, ...Object.keys(NOT_APPLICABLE)].filter((file) => !files.includes(file))).toEqual([])
  })

  it('cover exactly the specialisms the agent claims', () => {
    expect([...specialismsOf(facts)].sort()).toEqual(CLAIMED_SPECIALISMS)
  })

  it('leave out only files whose reason holds for the running agent', () => {
    const wrong = listStoryboardFiles(SCANNED_FOLDERS).flatMap((file) => {
      const reason = NOT_APPLICABLE[file] ?? specialismReason(file)
      return reason && !reason.holds(facts) ? [`${file}: ${reason.reason}`] : []
    })
    expect(wrong).toEqual([])
  })

  it('skip only listed steps of run storyboards, each for a reason that holds', () => {
    const known = new Set<string>()
    for (const [file, storyboard] of storyboards) {
      for (const phase of storyboard.phases) {
        for (const step of phase.steps) known.add(stepKey(file, phase.id, step.id))
      }
    }
    expect(Object.keys(SKIPPED_STEPS).filter((key) => !known.has(key))).toEqual([])
    const wrong = Object.entries(SKIPPED_STEPS).flatMap(([key, reason]) =>
      reason.holds(facts) ? [] : [`${key}: ${reason.reason}`],
    )
    expect(wrong).toEqual([])
  })

  it('grade only expectation kinds the runner implements in the steps they run', () => {
    const unsupported: string[] = []
    for (const [file, storyboard] of storyboards) {
      for (const phase of storyboard.phases) {
        for (const step of phase.steps) {
          if (SKIPPED_STEPS[stepKey(file, phase.id, step.id)]) continue
          for (const validation of step.validations ?? []) {
            if (!(SUPPORTED_CHECKS as readonly string[]).includes(validation.check)) {
              unsupported.push(`${stepKey(file, phase.id, step.id)}: ${validation.check}`)
            }
          }
        }
      }
    }
    expect(unsupported).toEqual([])
  })

  it('the domains/creative copy of the creative protocol storyboards is identical to protocols/creative', () => {
    for (const file of listStoryboardFiles(['protocols/creative'])) {
      const twin = file.replace(/^protocols\//, 'domains/')
      expect(readFileSync(conformancePath(COMPLIANCE_FOLDER, twin), 'utf8')).toBe(
        readFileSync(conformancePath(COMPLIANCE_FOLDER, file), 'utf8'),
      )
    }
  })

  it('run the optional creative-template audio phase because the agent declares audio formats', async () => {
    // audio_build is gated on `skip_if: "!test_kit.supports_audio_formats"`. The kit leaves the flag false for
    // display-only agents; the flag stands for "the agent declares an audio format", which this one does.
    expect(testKit.supports_audio_formats).toBe(false)
    const audio = await callers.get('mcp')!.call('list_creative_formats', { type: 'audio' })
    expect((audio.body?.formats as unknown[] | undefined)?.length).toBeGreaterThan(0)
  })
})

for (const [file, storyboard] of storyboards) {
  describe(file, () => {
    for (const transport of ['mcp', 'a2a'] as const) {
      describe(`over ${transport}`, () => {
        let run: StoryboardRun
        beforeAll(() => {
          run = new StoryboardRun(storyboard, callers.get(transport)!, agent.publicUrl)
        })
        for (const phase of storyboard.phases) {
          for (const step of phase.steps) {
            const skipped = SKIPPED_STEPS[stepKey(file, phase.id, step.id)]
            if (skipped) {
              it.skip(`${step.id} — not run: ${skipped.reason}`, () => {})
              continue
            }
            it(step.id, async () => {
              const outcome = await run.runStep(phase.id, step.id)
              if (outcome.advisories.length) {
                console.warn(`advisory: ${describeFailures({ ...outcome, failures: outcome.advisories })}`)
              }
              expect(
                outcome.failures.map((failure) => `${failure.check}: ${failure.detail ?? 'failed'}`),
                describeFailures(outcome),
              ).toEqual([])
            })
          }
        }
      })
    }
  })
}
