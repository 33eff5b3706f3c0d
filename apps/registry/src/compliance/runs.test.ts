/**
 * Compliance runs end to end, on SQLite and on PostgreSQL: our creative agent (apps/creative-agent) on 127.0.0.1
 * as the registered agent and as the reference agent, a deliberately broken agent (@adwire/storyboards/testing)
 * for failing steps, the registry on port 0 with every response checked against the document. Runs are jobs:
 * stored results with per-step diagnostics, history, a single step, compare, a run that survives a graceful
 * restart and one a crash left `running`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  parseEnv as parseCreativeEnv,
  startCreativeAgent,
  type RunningCreativeAgent,
} from '@adwire/app-creative-agent'
import { startBrokenAgent, type BrokenAgent } from '@adwire/storyboards/testing'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEnv } from '../env.js'
import { startRegistry, type RunningRegistry, type StartOverrides } from '../service.js'
import { startHoldingProxy, type HoldingProxy } from '../testing/proxy.js'
import { api, dropSchema, type Backend } from '../testing/registry.js'
import type { StoryboardOutcome } from './contract.js'
import { complianceRunLauncher } from './runs.js'

const postgresUrl = await resolveTestPostgresUrl()
const backends: Array<[string, Backend | undefined]> = [
  ['sqlite', { kind: 'sqlite' }],
  ['postgres', postgresUrl ? { kind: 'postgres', url: postgresUrl } : undefined],
]

/** The credential the registry holds for our creative agent (not the test kit's key: only a run presenting it passes). */
const AGENT_SECRET = 'registry-held-secret-for-the-creative-agent-0123'

let creative: RunningCreativeAgent
let broken: BrokenAgent
/** The creative agent behind a proxy that holds every request 250 ms (a run stays in flight long enough to stop it). */
let slow: HoldingProxy
let slowUrl: string
let tokens: Server
let tokenUrl: string
const tokenRequests: Array<{ authorization: string; body: string }> = []
let agentDir: string

beforeAll(async () => {
  agentDir = mkdtempSync(join(tmpdir(), 'adwire-registry-agents-'))
  creative = await startCreativeAgent(
    parseCreativeEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(agentDir, 'creative.sqlite')}`,
      TOKENS: `registry:${AGENT_SECRET}:read+write`,
    }),
  )
  broken = await startBrokenAgent(['missing_field'])
  slow = await startHoldingProxy(creative.url, (forward) => setTimeout(forward, 250))
  // The creative agent's OAuth token endpoint (client credentials): the registry's client gets AGENT_SECRET.
  tokens = createServer((incoming, outgoing) => {
    let body = ''
    incoming.on('data', (chunk: Buffer) => (body += chunk.toString()))
    incoming.on('end', () => {
      const authorization = incoming.headers.authorization ?? ''
      tokenRequests.push({ authorization, body })
      const ok =
        authorization === `Basic ${btoa('registry-client:client-secret-0123456789')}` &&
        new URLSearchParams(body).get('grant_type') === 'client_credentials'
      outgoing
        .writeHead(ok ? 200 : 401, { 'content-type': 'application/json' })
        .end(
          JSON.stringify(
            ok
              ? { access_token: AGENT_SECRET, token_type: 'Bearer', expires_in: 300 }
              : { error: 'invalid_client' },
          ),
        )
    })
  })
  await new Promise<void>((resolve) => tokens.listen(0, '127.0.0.1', resolve))
  tokenUrl = `http://127.0.0.1:${(tokens.address() as AddressInfo).port}/token`
  slowUrl = slow.url
}, 60_000)

afterAll(async () => {
  await creative?.close()
  await broken?.close()
  tokens?.closeAllConnections()
  await new Promise((resolve) => tokens?.close(resolve))
  await slow?.close()
  if (agentDir) rmSync(agentDir, { recursive: true, force: true })
})

describe.each(backends)('compliance runs on %s', (name, backend) => {
  let folder: string | undefined
  let schema: string | undefined
  let registry: RunningRegistry
  let key: string
  let otherKey: string
  const outcomes: StoryboardOutcome[] = []
  const credentialsAsked: string[] = []
  const creativeMcp = () => `${creative.url}/mcp`
  const slowMcp = () => `${slowUrl}/mcp`
  const enc = encodeURIComponent

  /** The registry on this backend's database (the same file or schema across restarts). */
  const start = async (extra: StartOverrides = {}) => {
    const env = {
      PORT: '0',
      SEED: '0',
      ALLOW_PRIVATE_AGENTS: '1',
      AGENT_TIMEOUT_MS: '5000',
      RATE_LIMIT_READ_PER_MINUTE: '0',
      RATE_LIMIT_WRITE_PER_MINUTE: '0',
      RATE_LIMIT_CRAWL_PER_MINUTE: '0',
    }
    const database =
      backend!.kind === 'sqlite'
        ? { DATABASE_URL: `sqlite:${join(folder!, 'registry.sqlite')}` }
        : { DATABASE_URL: backend!.url, DATABASE_SCHEMA: schema! }
    return startRegistry(parseEnv({ ...env, ...database }), {
      validateResponses: 'strict',
      log: (entry) => {
        if (entry.error || entry.response_invalid) console.error(entry)
      },
      compliance: {
        outcomes: { record: async (outcome) => void outcomes.push(outcome) },
        credentials: {
          credentialFor: async (url) => {
            credentialsAsked.push(url)
            if (url === `${creative.url}/a2a`) {
              return {
                type: 'oauth_client_credentials',
                tokenEndpoint: tokenUrl,
                clientId: 'registry-client',
                clientSecret: 'client-secret-0123456789',
                scope: 'adcp',
              }
            }
            return url.startsWith(creative.url) || url.startsWith(slowUrl)
              ? { type: 'bearer', token: AGENT_SECRET }
              : undefined
          },
        },
      },
      referenceAgent: { url: `${creative.url}/a2a`, name: 'adwire creative agent' },
      // The runs alone: no monitoring heartbeats of the registered agents (end-to-end.test.ts has them).
      complianceLauncher: () => ({ launch: async () => ({ runIds: [] }) }),
      complianceRuns: { leaseMs: 1000, stepTimeoutMs: 5000, runTimeoutMs: 60_000 },
      ...extra,
    })
  }

  beforeAll(async () => {
    if (!backend) return
    if (backend.kind === 'sqlite') folder = mkdtempSync(join(tmpdir(), 'adwire-registry-runs-'))
    else schema = `registry_runs_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
    registry = await start()
    key = (await registry.createOrg('Creative owner')).apiKey
    otherKey = (await registry.createOrg('Someone else')).apiKey
    for (const url of [creativeMcp(), `${broken.url}/mcp`, slowMcp(), `${creative.url}/a2a`]) {
      const registered = await api(registry, 'registerMemberAgent', '/api/me/agents', {
        token: key,
        body: { url, type: 'creative', visibility: 'public' },
      })
      expect(registered.status).toBe(201)
    }
  }, 60_000)

  afterAll(async () => {
    if (!backend) return
    await registry?.close()
    if (folder) rmSync(folder, { recursive: true, force: true })
    if (schema && backend.kind === 'postgres') await dropSchema(backend.url, schema)
  })

  it.skipIf(!backend)(
    `runs a storyboard on our creative agent and stores results, diagnostics and history (${name})`,
    async () => {
      const before = outcomes.length
      const run = await api(
        registry,
        'runStoryboard',
        `/api/registry/agents/${enc(creativeMcp())}/storyboard/capability_discovery/run`,
        {
          method: 'POST',
          token: key,
        },
      )
      expect(run.status).toBe(200)
      expect(run.body).toMatchObject({
        storyboard: { id: 'capability_discovery', category: 'capability_discovery' },
        agent: { url: creativeMcp(), profile: { protocol: 'mcp' } },
        adcp_version: '3.1.19',
        requested_compliance_target: '3.1',
        badge_eligible: true,
        storyboard_status: { storyboard_id: 'capability_discovery', status: 'passing', failure_count: 0 },
        diagnostics: [],
      })
      expect(run.body.storyboard_status.steps_passed).toBeGreaterThanOrEqual(2)
      expect(run.body.phases[0].steps[0]).toMatchObject({ id: 'get_capabilities', status: 'passed' })
      // The registry presented the saved credential (the agent accepts no other token).
      expect(credentialsAsked).toContain(creativeMcp())
      // One outcome per finished storyboard, for the status side.
      expect(outcomes.slice(before)).toEqual([
        expect.objectContaining({
          runId: run.body.run_id,
          agentUrl: creativeMcp(),
          storyboardId: 'capability_discovery',
          adcpVersion: '3.1.19',
          status: 'passed',
          trigger: 'manual',
          stepsFailed: 0,
        }),
      ])

      const history = await api(
        registry,
        'getAgentComplianceHistory',
        `/api/registry/agents/${enc(creativeMcp())}/compliance/history`,
      )
      expect(history.body.runs[0]).toMatchObject({
        id: run.body.run_id,
        overall_status: 'passing',
        triggered_by: 'manual',
        tracks_passed: 1,
        tracks_failed: 0,
      })
      const diagnostics = await api(
        registry,
        'getAgentComplianceStepDiagnostics',
        `/api/registry/agents/${enc(creativeMcp())}/compliance/diagnostics?run_id=${run.body.run_id}`,
        { token: key },
      )
      expect(diagnostics.body.run_id).toBe(run.body.run_id)
      expect(diagnostics.body.diagnostics.map((step: { step_id: string }) => step.step_id)).toContain(
        'get_capabilities',
      )
      expect(diagnostics.body.diagnostics.every((step: { step_passed: boolean }) => step.step_passed)).toBe(
        true,
      )

      const status = await api(
        registry,
        'getAgentStoryboardStatus',
        `/api/registry/agents/${enc(creativeMcp())}/storyboard-status`,
        { token: otherKey },
      )
      expect(status.body).toMatchObject({ agent_url: creativeMcp(), passing_count: 1, total_count: 1 })
      expect(status.body.storyboards[0]).toMatchObject({
        storyboard_id: 'capability_discovery',
        status: 'passing',
        track: 'core',
      })
      expect(status.body.storyboards[0].last_passed_at).toBe(status.body.storyboards[0].last_tested_at)
    },
    60_000,
  )

  it.skipIf(!backend)(
    `runs over A2A with the credential exchanged at the agent's OAuth token endpoint (${name})`,
    async () => {
      const agent = `${creative.url}/a2a`
      const asked = tokenRequests.length
      const run = await api(
        registry,
        'runStoryboard',
        `/api/registry/agents/${enc(agent)}/storyboard/capability_discovery/run`,
        { method: 'POST', token: key },
      )
      expect(run.body).toMatchObject({
        agent: { url: agent, profile: { protocol: 'a2a' } },
        storyboard_status: { status: 'passing' },
      })
      expect(tokenRequests.length).toBeGreaterThan(asked)
      expect(new URLSearchParams(tokenRequests.at(-1)!.body).get('scope')).toBe('adcp')
    },
    60_000,
  )

  it.skipIf(!backend)(
    `stores the request and response of failing steps (${name})`,
    async () => {
      const agent = `${broken.url}/mcp`
      const run = await api(
        registry,
        'runStoryboard',
        `/api/registry/agents/${enc(agent)}/storyboard/capability_discovery/run`,
        {
          method: 'POST',
          token: key,
          body: {},
        },
      )
      expect(run.status).toBe(200)
      expect(run.body.storyboard_status).toMatchObject({
        status: 'failing',
        first_failed_step_id: 'get_capabilities',
      })
      expect(run.body.storyboard_status.first_failure_message).toMatch(/supported_protocols/)
      expect(run.body.diagnostics[0]).toMatchObject({
        step_id: 'get_capabilities',
        task: 'get_adcp_capabilities',
      })
      const diagnostics = await api(
        registry,
        'getAgentComplianceStepDiagnostics',
        `/api/registry/agents/${enc(agent)}/compliance/diagnostics`,
        { token: key },
      )
      expect(diagnostics.body.run_id).toBe(run.body.run_id)
      const failed = diagnostics.body.diagnostics.find((step: { step_passed: boolean }) => !step.step_passed)
      expect(failed).toMatchObject({ step_id: 'get_capabilities', request_url: agent, response_status: 200 })
      expect(failed.response_jsonb).toMatchObject({ adcp: { major_versions: [3] } })
      expect(failed.response_jsonb.supported_protocols).toBeUndefined()
      expect(failed.failed_validations_jsonb.map((check: { check: string }) => check.check)).toContain(
        'field_present',
      )
      expect(outcomes.at(-1)).toMatchObject({ agentUrl: agent, status: 'failed' })
    },
    60_000,
  )

  it.skipIf(!backend)(
    `runs a single step with the caller's context, and compares with the reference agent (${name})`,
    async () => {
      const step = await api(
        registry,
        'runStoryboardStep',
        `/api/registry/agents/${enc(creativeMcp())}/storyboard/capability_discovery/step/get_capabilities`,
        {
          method: 'POST',
          token: key,
          body: { context: { note: 'from the test' } },
        },
      )
      expect(step.status).toBe(200)
      expect(step.body).toMatchObject({
        adcp_version: '3.1.19',
        requested_compliance_target: '3.1',
        storyboard: { id: 'capability_discovery' },
        step: { step_id: 'get_capabilities', status: 'passed' },
        passed: true,
        dry_run: true,
      })
      const history = await api(
        registry,
        'getAgentComplianceHistory',
        `/api/registry/agents/${enc(creativeMcp())}/compliance/history?limit=1`,
      )
      expect(history.body.runs[0]).toMatchObject({ id: step.body.run_id, triggered_by: 'step' })

      const compare = await api(
        registry,
        'compareStoryboard',
        `/api/registry/agents/${enc(creativeMcp())}/storyboard/capability_discovery/compare`,
        {
          method: 'POST',
          token: key,
        },
      )
      expect(compare.status).toBe(200)
      expect(compare.body).toMatchObject({
        storyboard: { id: 'capability_discovery' },
        user_agent: { url: creativeMcp(), profile: { protocol: 'mcp' }, summary: { status: 'passing' } },
        reference_agent: {
          url: `${creative.url}/a2a`,
          name: 'adwire creative agent',
          profile: { protocol: 'a2a' },
          summary: { status: 'passing' },
        },
        badge_eligible: true,
      })
      expect(compare.body.phases[0].steps[0]).toMatchObject({
        id: 'get_capabilities',
        user_status: 'passed',
        reference_status: 'passed',
        matches: true,
      })
    },
    60_000,
  )

  it.skipIf(!backend)(
    `accepts a run at once with Prefer: respond-async, and launches runs for the status side (${name})`,
    async () => {
      const response = await fetch(
        `${registry.url}/api/registry/agents/${enc(creativeMcp())}/storyboard/capability_discovery/run`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, prefer: 'respond-async' },
        },
      )
      expect(response.status).toBe(202)
      expect(response.headers.get('preference-applied')).toBe('respond-async')
      const accepted = (await response.json()) as { run_id: string; state: string }
      expect(accepted.state).toBe('queued')
      const finished = await registry.complianceRuns.wait(accepted.run_id, 30_000)
      expect(finished).toMatchObject({ state: 'completed', overall_status: 'passing' })

      const before = outcomes.length
      const launcher = complianceRunLauncher(registry.complianceRuns)
      const { runIds } = await launcher.launch(creativeMcp(), {
        trigger: 'heartbeat',
        storyboardIds: ['capability_discovery'],
      })
      expect(runIds).toHaveLength(1)
      // Stored before it runs: the id is answered at once.
      expect((await registry.complianceRuns.store.get(runIds[0]!))?.trigger).toBe('heartbeat')
      expect((await registry.complianceRuns.wait(runIds[0]!, 30_000))?.state).toBe('completed')
      expect(outcomes.slice(before)).toEqual([
        expect.objectContaining({ runId: runIds[0], trigger: 'heartbeat', status: 'passed' }),
      ])
    },
    60_000,
  )

  it.skipIf(!backend)(
    `resumes a run in flight after a graceful restart (${name})`,
    async () => {
      const response = await fetch(
        `${registry.url}/api/registry/agents/${enc(slowMcp())}/storyboard/capability_discovery/run`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, prefer: 'respond-async' },
        },
      )
      const { run_id: runId } = (await response.json()) as { run_id: string }
      // Claimed: the slow agent keeps it running for a second or more (every request held 250 ms).
      for (let tries = 0; (await registry.complianceRuns.store.get(runId))?.state === 'queued'; tries++) {
        expect(tries).toBeLessThan(500)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      await registry.close()
      const stopped = await (registry = await start()).complianceRuns.store.get(runId)
      // Released by the stop (the attempt not counted), then claimed again by the new instance.
      expect(stopped?.attempts).toBeLessThanOrEqual(1)
      const finished = await registry.complianceRuns.wait(runId, 30_000)
      expect(finished).toMatchObject({ state: 'completed', overall_status: 'passing', attempts: 1 })
      const history = await api(
        registry,
        'getAgentComplianceHistory',
        `/api/registry/agents/${enc(slowMcp())}/compliance/history`,
      )
      expect(history.body.runs.map((run: { id: string }) => run.id)).toEqual([runId])
    },
    60_000,
  )

  it.skipIf(!backend)(
    `after a crash, runs the run it left running again, and fails one that already had its second attempt (${name})`,
    async () => {
      await registry.close()
      const crashed = (id: string, attempts: number) =>
        registry.repository.driver.run(
          `INSERT INTO registry_compliance_runs (id, agent_url, agent_url_canonical, org_id, trigger_kind, storyboard_ids,
           options, state, attempts, lease_until, overall_status, tracks_passed, tracks_failed, tracks_skipped,
           tracks_partial, created_at, started_at)
         VALUES (?, ?, ?, NULL, 'manual', '["capability_discovery"]', '{"requestedComplianceTarget":"3.1"}', 'running', ?,
           '2020-01-01T00:00:00.000Z', 'running', 0, 0, 0, 0, ?, ?)`,
          [id, creativeMcp(), creativeMcp(), attempts, new Date().toISOString(), new Date().toISOString()],
        )
      // The crashed instance's rows, written on the database as it left them.
      registry = await start()
      const resumed = crypto.randomUUID()
      const gaveUp = crypto.randomUUID()
      await crashed(resumed, 1)
      await crashed(gaveUp, 2)
      await registry.close()
      registry = await start()
      expect(await registry.complianceRuns.wait(resumed, 30_000)).toMatchObject({
        state: 'completed',
        overall_status: 'passing',
        attempts: 2,
      })
      expect(await registry.complianceRuns.wait(gaveUp, 5_000)).toMatchObject({
        state: 'failed',
        overall_status: 'error',
        error: 'interrupted',
      })
      const history = await api(
        registry,
        'getAgentComplianceHistory',
        `/api/registry/agents/${enc(creativeMcp())}/compliance/history?limit=100`,
      )
      expect(history.body.runs.find((run: { id: string }) => run.id === gaveUp)).toMatchObject({
        overall_status: 'error',
      })
    },
    60_000,
  )

  it.skipIf(!backend)(
    `lists the storyboards our creative agent's capabilities make applicable (${name})`,
    async () => {
      const applicable = await api(
        registry,
        'getApplicableStoryboards',
        `/api/registry/agents/${enc(creativeMcp())}/applicable-storyboards`,
        { token: key },
      )
      expect(applicable.status).toBe(200)
      expect(applicable.body).toMatchObject({
        agent_url: creativeMcp(),
        adcp_version: '3.1.19',
        requested_compliance_target: '3.1',
      })
      expect(applicable.body.supported_protocols).toContain('creative')
      const bundles = applicable.body.bundles.map(
        (group: { kind: string; id: string }) => `${group.kind}:${group.id}`,
      )
      expect(bundles).toContain('universal:universal')
      expect(bundles).toContain('domain:creative')
      expect(bundles).not.toContain('domain:media-buy')
      const universal = applicable.body.bundles.find((group: { id: string }) => group.id === 'universal')
      expect(universal.storyboards.map((storyboard: { id: string }) => storyboard.id)).toContain(
        'capability_discovery',
      )
    },
    60_000,
  )

  it.skipIf(!backend)(
    `refuses what the document refuses (${name})`,
    async () => {
      const path = `/api/registry/agents/${enc(creativeMcp())}/storyboard`
      expect(
        (await api(registry, 'runStoryboard', `${path}/capability_discovery/run`, { method: 'POST' })).status,
      ).toBe(401)
      // Another organization's agent.
      const other = await api(registry, 'runStoryboard', `${path}/capability_discovery/run`, {
        method: 'POST',
        token: otherKey,
      })
      expect([other.status, other.body.error]).toEqual([403, 'not_agent_owner'])
      expect(
        (
          await api(registry, 'runStoryboard', `${path}/no_such_storyboard/run`, {
            method: 'POST',
            token: key,
          })
        ).status,
      ).toBe(404)
      expect(
        (
          await api(registry, 'runStoryboardStep', `${path}/capability_discovery/step/no_such_step`, {
            method: 'POST',
            token: key,
            body: {},
          })
        ).status,
      ).toBe(404)
      expect(
        (
          await api(
            registry,
            'runStoryboard',
            `/api/registry/agents/${enc('ftp://x.example')}/storyboard/capability_discovery/run`,
            { method: 'POST', token: key },
          )
        ).status,
      ).toBe(400)
      expect(
        (
          await api(registry, 'runStoryboard', `${path}/capability_discovery/run?compliance_target=2.0`, {
            method: 'POST',
            token: key,
          })
        ).status,
      ).toBe(400)
      const diagnostics = `/api/registry/agents/${enc(creativeMcp())}/compliance/diagnostics`
      expect(
        (
          await api(registry, 'getAgentComplianceStepDiagnostics', `${diagnostics}?run_id=nope`, {
            token: key,
          })
        ).status,
      ).toBe(400)
      expect(
        (await api(registry, 'getAgentComplianceStepDiagnostics', diagnostics, { token: otherKey })).status,
      ).toBe(403)
      // A run of another agent is not this agent's.
      const brokenRun = (await registry.complianceRuns.store.history(`${broken.url}/mcp`, 1))[0]!
      const foreign = await api(
        registry,
        'getAgentComplianceStepDiagnostics',
        `${diagnostics}?run_id=${brokenRun.id}`,
        { token: key },
      )
      expect(foreign.body).toMatchObject({ run_id: null, count: 0 })
      expect(
        (
          await api(
            registry,
            'getAgentComplianceHistory',
            `/api/registry/agents/${enc(creativeMcp())}/compliance/history?limit=101`,
          )
        ).status,
      ).toBe(400)
      expect(
        (
          await api(
            registry,
            'getAgentStoryboardStatus',
            `/api/registry/agents/${enc(creativeMcp())}/storyboard-status`,
          )
        ).status,
      ).toBe(401)
      const bulk = await api(
        registry,
        'bulkAgentStoryboardStatus',
        '/api/registry/agents/storyboard-status',
        {
          token: key,
          body: { agent_urls: [creativeMcp(), 'not a url', 'https://never-tested.example/mcp'] },
        },
      )
      expect(bulk.body.invalid_urls).toBe(1)
      expect(bulk.body.agents['https://never-tested.example/mcp']).toEqual([])
      expect(
        bulk.body.agents[creativeMcp()].map(
          (storyboard: { storyboard_id: string }) => storyboard.storyboard_id,
        ),
      ).toContain('capability_discovery')
      const tooMany = await api(
        registry,
        'bulkAgentStoryboardStatus',
        '/api/registry/agents/storyboard-status',
        {
          token: key,
          body: { agent_urls: Array.from({ length: 101 }, (_, index) => `https://a${index}.example/mcp`) },
        },
      )
      expect(tooMany.status).toBe(400)
    },
    60_000,
  )
})
