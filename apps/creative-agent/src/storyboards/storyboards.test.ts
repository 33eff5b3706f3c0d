/**
 * The AdCP 3.1.19 compliance storyboards that apply to the creative agent, run with @adwire/storyboards against
 * the running agent over MCP (official MCP client) and over A2A (official A2A client). Every step of the
 * storyboards below either passes or is skipped by the runner with a reason the bundle defines; the passing
 * steps are pinned, and both transports give the same results.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
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
import { startCreativeAgent, type RunningCreativeAgent } from '../service.js'

/** The storyboards run against the agent (the universal ones every agent must pass, the creative protocol, and the two specialisms it claims). */
const STORYBOARDS = [
  'universal/capability-discovery',
  'universal/error-compliance',
  'universal/idempotency',
  'universal/pagination-integrity-creative-formats',
  'universal/schema-validation',
  'protocols/creative/index',
  'protocols/creative/scenarios/canonical_supported_formats',
  'specialisms/creative-template/index',
  'specialisms/creative-generative/index',
]

/** The steps that pass, `storyboard key#step`: what the agent implements. */
const PASSING = [
  'universal/capability-discovery#get_capabilities',
  'universal/capability-discovery#get_capabilities_filtered',
  'universal/error-compliance#get_capabilities',
  'universal/idempotency#get_capabilities',
  'universal/schema-validation#get_capabilities',
  'protocols/creative/index#get_capabilities',
  'protocols/creative/index#list_formats',
  'protocols/creative/index#preview_display',
  'protocols/creative/scenarios/canonical_supported_formats#get_capabilities',
  'protocols/creative/scenarios/canonical_supported_formats#build_image_capability',
  'protocols/creative/scenarios/canonical_supported_formats#reject_unknown_capability',
  'specialisms/creative-template/index#get_capabilities',
  'specialisms/creative-template/index#discover_formats',
  'specialisms/creative-template/index#filter_by_type',
  'specialisms/creative-template/index#preview_creative',
  'specialisms/creative-template/index#build_creative',
  'specialisms/creative-template/index#build_multi_format',
  'specialisms/creative-template/index#build_audio_creative',
  'specialisms/creative-generative/index#get_capabilities',
  'specialisms/creative-generative/index#discover_formats',
  'specialisms/creative-generative/index#build_draft',
  'specialisms/creative-generative/index#refine_creative',
  'specialisms/creative-generative/index#build_multi_format',
  'specialisms/creative-generative/index#build_production',
].sort()

const bundle = loadBundle()
const testKit = bundle.testKits.get('test-kits/acme-outdoor.yaml') as { auth: { api_key: string } }

/** The agent's public base URL (what format_id agent_url carries); the tests reach it on 127.0.0.1. */
const PUBLIC_URL = 'https://creative-agent.adwire.test'

let agent: RunningCreativeAgent
let dataDir: string
const results = new Map<'mcp' | 'a2a', RunResult>()

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'adwire-storyboards-'))
  agent = await startCreativeAgent(
    parseEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(dataDir, 'creative-agent.sqlite')}`,
      TOKENS: `acme-outdoor-buyer:${testKit.auth.api_key}:read+write`,
      // Like a deployment: get_adcp_capabilities requires identity.brand_json_url to be https.
      PUBLIC_URL,
    }),
  )
  for (const protocol of ['mcp', 'a2a'] as const) {
    results.set(
      protocol,
      await runStoryboards({
        agentUrl: agent.url,
        publicUrl: PUBLIC_URL,
        protocol,
        bundle,
        storyboards: STORYBOARDS,
        // The agent declares audio formats, which is what the kit's flag stands for (it is false for display-only agents).
        testKitOverrides: { supports_audio_formats: true },
      }),
    )
  }
}, 120_000)

afterAll(async () => {
  await agent?.close()
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
})

const outcome = (result: RunResult) =>
  result.storyboards.flatMap((storyboard) =>
    storyboard.steps.map(
      (step) => `${storyboard.key}#${step.step_id} ${step.status}${step.skip ? ` ${step.skip.reason}` : ''}`,
    ),
  )

describe.each(['mcp', 'a2a'] as const)('the creative agent over %s', (protocol) => {
  it('fails no step of the applicable storyboards', () => {
    const result = results.get(protocol)!
    expect(result.summary.steps.failed, renderReport(result)).toBe(0)
    expect(result.storyboards.map((storyboard) => storyboard.status)).not.toContain('failed')
  })

  it('passes exactly the steps the agent implements', () => {
    const passed = results
      .get(protocol)!
      .storyboards.flatMap((storyboard) =>
        storyboard.steps
          .filter((step) => step.status === 'passed')
          .map((step) => `${storyboard.key}#${step.step_id}`),
      )
    expect(passed.sort()).toEqual(PASSING)
  })

  it('skips the rest for reasons the bundle defines, naming the missing tool or prerequisite', () => {
    const skipped = results
      .get(protocol)!
      .storyboards.flatMap((storyboard) => storyboard.steps.filter((step) => step.status !== 'passed'))
    expect(skipped.length).toBeGreaterThan(0)
    for (const step of skipped) expect(step.skip?.detail).toBeTruthy()
    const byId = (key: string, id: string) =>
      results
        .get(protocol)!
        .storyboards.find((storyboard) => storyboard.key === key)!
        .steps.find((step) => step.step_id === id)!
    expect(byId('universal/error-compliance', 'negative_budget').skip).toMatchObject({
      reason: 'missing_tool',
    })
    expect(byId('universal/schema-validation', 'list_formats_match').skip).toMatchObject({
      reason: 'prerequisite_failed',
    })
    // requires: [controller] gates the whole storyboard at load time (storyboard-schema.yaml, "requires").
    const pagination = results
      .get(protocol)!
      .storyboards.find((storyboard) => storyboard.key === 'universal/pagination-integrity-creative-formats')!
    expect([pagination.status, pagination.skip]).toEqual([
      'skipped',
      { reason: 'requirement_unmet', detail: 'controller' },
    ])
    expect(byId('specialisms/creative-generative/index', 'expect_substitution_safe').skip).toMatchObject({
      reason: 'unsatisfied_contract',
    })
  })
})

describe('an agent whose card offers only A2A 0.3 (written to earlier 3.x rules)', () => {
  it('is run over A2A 0.3 by the official client, with the same step results as over 1.0', async () => {
    // The 0.3 fields of the agent's card, served on their own; `url` is the agent's A2A endpoint, which
    // answers 0.3 requests in 0.3.
    const card = (await (await fetch(`${agent.url}/a2a/.well-known/agent-card.json`)).json()) as Record<
      string,
      unknown
    >
    const { supportedInterfaces: _interfaces, securityRequirements: _requirements, ...legacy } = card
    const body = JSON.stringify({ ...legacy, url: `${agent.url}/a2a` })
    const server = createServer((request, response) => {
      const found = request.url === '/.well-known/agent-card.json'
      response.writeHead(found ? 200 : 404, { 'content-type': 'application/json' }).end(found ? body : '{}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const storyboards = ['universal/capability-discovery', 'protocols/creative/index']
      const legacyRun = await runStoryboards({
        agentUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        publicUrl: PUBLIC_URL,
        protocol: 'a2a',
        bundle,
        storyboards,
        testKitOverrides: { supports_audio_formats: true },
      })
      const current = outcome(results.get('a2a')!).filter((line) => storyboards.includes(line.split('#')[0]!))
      expect(legacyRun.summary.steps.passed).toBeGreaterThan(3)
      expect(outcome(legacyRun), renderReport(legacyRun)).toEqual(current)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe('both transports', () => {
  it('give the same result for every step', () => {
    expect(outcome(results.get('a2a')!)).toEqual(outcome(results.get('mcp')!))
  })

  it("reach the agent with each security probe's own credentials (none, the kit key, random invalid ones) over both", async () => {
    // The kit's probe task (list_creatives) is not a task of this agent; the operator names one that is.
    const overlay = { auth: { api_key: testKit.auth.api_key, probe_task: 'build_creative' } }
    const probes: string[][] = []
    for (const protocol of ['mcp', 'a2a'] as const) {
      const result = await runStoryboards({
        agentUrl: agent.url,
        publicUrl: PUBLIC_URL,
        protocol,
        bundle,
        storyboards: ['security_baseline'],
        testKitOverrides: overlay,
      })
      const steps = result.storyboards[0]!.steps
      expect(steps.find((step) => step.step_id === 'probe_api_key')!.status).toBe('passed')
      for (const id of ['probe_unauth', 'probe_invalid_api_key', 'probe_invalid_oauth_token']) {
        const probe = steps.find((step) => step.step_id === id)!
        expect(probe.error, `${protocol} ${id}`).toBeUndefined()
        expect(typeof probe.http_status).toBe('number')
      }
      probes.push(steps.map((step) => `${step.step_id} ${step.status} ${step.http_status ?? ''}`))
    }
    expect(probes[1]).toEqual(probes[0])
  })

  it('find its webhook signing key through brand.json (webhook-emission signing_keys_published)', async () => {
    const webhooks = await startWebhookReceiver({ keys: jwksResolver({ keys: [] }) })
    try {
      for (const protocol of ['mcp', 'a2a'] as const) {
        const result = await runStoryboards({
          agentUrl: agent.url,
          publicUrl: PUBLIC_URL,
          protocol,
          bundle,
          storyboards: ['webhook_emission'],
          webhooks,
        })
        const byId = Object.fromEntries(result.storyboards[0]!.steps.map((step) => [step.step_id, step]))
        expect(byId.fetch_brand_json!.status, renderReport(result)).toBe('passed')
        expect(byId.assert_webhook_signing_key_present!.status, renderReport(result)).toBe('passed')
        // It emits no webhooks for create_media_buy, which it does not offer.
        expect(byId.trigger_webhook_operation!.skip).toMatchObject({ reason: 'missing_tool' })
      }
    } finally {
      await webhooks.close()
    }
  })

  it('leave out the specialisms the agent does not claim, as not applicable', async () => {
    const result = await runStoryboards({
      agentUrl: agent.url,
      publicUrl: PUBLIC_URL,
      bundle,
      storyboards: ['specialisms/sales-guaranteed/index', 'protocols/media-buy/index'],
    })
    // The two, and the media-buy scenarios they require (run alongside them), none of which applies.
    expect(result.storyboards.length).toBeGreaterThan(2)
    expect(
      new Set(result.storyboards.map((storyboard) => `${storyboard.status} ${storyboard.skip?.reason}`)),
    ).toEqual(new Set(['not_applicable not_applicable']))
    expect(result.storyboards[0]!.skip!.detail).toMatch(/sales-guaranteed/)
  })
})
