/**
 * Both halves of Agent Compliance as the service wires them, with nothing stood in: our creative agent on
 * 127.0.0.1 is registered as a member agent, the monitoring scheduler launches its first heartbeat through the
 * runs' launcher, @adwire/storyboards runs the full suite against it over MCP, every finished storyboard is
 * reported to the status side, and the compliance status, verification and badge are read from what was
 * stored, also after a restart on the same SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  parseEnv as parseCreativeEnv,
  startCreativeAgent,
  type RunningCreativeAgent,
} from '@adwire/app-creative-agent'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { parseEnv } from '../env.js'
import { startRegistry, type RunningRegistry } from '../service.js'
import { api } from '../testing/registry.js'
import { TEST_CREDENTIALS_KEY } from './status-testing.js'

let creative: RunningCreativeAgent
let registry: RunningRegistry | undefined
let folder: string

const start = () =>
  startRegistry(
    parseEnv({
      PORT: '0',
      SEED: '0',
      DATABASE_URL: `sqlite:${join(folder, 'registry.sqlite')}`,
      ALLOW_PRIVATE_AGENTS: '1',
      AGENT_TIMEOUT_MS: '10000',
      AGENT_CREDENTIALS_KEY: TEST_CREDENTIALS_KEY,
      MONITORING_POLL_SECONDS: '1',
      RATE_LIMIT_READ_PER_MINUTE: '0',
      RATE_LIMIT_WRITE_PER_MINUTE: '0',
      RATE_LIMIT_CRAWL_PER_MINUTE: '0',
    }),
    {
      validateResponses: 'strict',
      log: (entry) => {
        if (entry.error || entry.response_invalid) console.error(entry)
      },
    },
  )

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'adwire-registry-e2e-'))
  creative = await startCreativeAgent(
    parseCreativeEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(folder, 'creative.sqlite')}`,
      // The test kit's key, which the runner presents when the registry holds no credential for the agent.
      TOKENS: 'kit-buyer:demo-acme-outdoor-v1:read+write',
    }),
  )
  registry = await start()
})

afterAll(async () => {
  await registry?.close()
  await creative?.close()
  rmSync(folder, { recursive: true, force: true })
})

async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

it('a registered agent gets a heartbeat run whose stored results give its status, verification and badge', async () => {
  const agentUrl = `${creative.url}/mcp`
  const path = `/api/registry/agents/${encodeURIComponent(agentUrl)}`
  const { apiKey } = await registry!.createOrg('Creative owner')
  const registered = await api(registry!, 'registerMemberAgent', '/api/me/agents', {
    token: apiKey,
    body: { url: agentUrl, type: 'creative' },
  })
  expect(registered.status).toBe(201)

  // The scheduler's first heartbeat: a full-suite run launched by the status side, executed by the runs side.
  let runId = ''
  await eventually(async () => {
    const history = await api(registry!, 'getAgentComplianceHistory', `${path}/compliance/history`)
    const heartbeat = history.body.runs.find(
      (run: { triggered_by: string }) => run.triggered_by === 'heartbeat',
    )
    runId = heartbeat?.id ?? ''
    return heartbeat !== undefined
  }, 20_000)
  const finished = await registry!.complianceRuns.wait(runId, 120_000)
  expect(finished?.state).toBe('completed')

  // Per-step diagnostics were stored for the run.
  const diagnostics = await api(
    registry!,
    'getAgentComplianceStepDiagnostics',
    `${path}/compliance/diagnostics?run_id=${runId}`,
    { token: apiKey },
  )
  expect(diagnostics.status).toBe(200)

  // The status side saw every storyboard the run finished: no longer `unknown`.
  let detail = await api(registry!, 'getAgentCompliance', `${path}/compliance`, { token: apiKey })
  await eventually(async () => {
    detail = await api(registry!, 'getAgentCompliance', `${path}/compliance`, { token: apiKey })
    return detail.body.status !== 'unknown'
  }, 10_000)
  expect(['passing', 'failing', 'partial', 'degraded']).toContain(detail.body.status)
  expect(detail.body.storyboards_total).toBeGreaterThan(0)
  expect(detail.body.verdict_source).toBe('heartbeat')
  expect(detail.body.adcp_version).toBe('3.1.19')

  // Verification and the badge agree with each other and with the status.
  const verification = await api(registry!, 'getAgentVerification', `${path}/verification`)
  const badge = await fetch(`${registry!.url}${path}/badge/creative.svg`)
  const svg = await badge.text()
  expect(badge.status).toBe(200)
  expect(svg).toMatch(/^<svg /)
  if (verification.body.verified) {
    expect(detail.body.status).toBe('passing')
    expect(svg).not.toContain('Not Verified')
  } else {
    expect(svg).toContain('Not Verified')
  }

  // All of it is stored: a restarted registry on the same file answers the same.
  await registry!.close()
  registry = await start()
  const again = await api(registry, 'getAgentCompliance', `${path}/compliance`, { token: apiKey })
  expect(again.body).toMatchObject({
    status: detail.body.status,
    storyboards_total: detail.body.storyboards_total,
    storyboards_passing: detail.body.storyboards_passing,
    verified: detail.body.verified,
  })
}, 180_000)
