/**
 * The compliance run queue's leases, on SQLite and on PostgreSQL. The store: concurrent claimers never get the
 * same run (`FOR UPDATE SKIP LOCKED` on PostgreSQL, a compare-and-set on SQLite), and a claim whose lease
 * expired and was recovered can neither renew nor finish the run any more (the attempt count fences it). The
 * service: a run whose worker thread died mid-run (our creative agent on 127.0.0.1 behind a gate that holds its
 * requests) stays `running` until its lease expires, is then reclaimed and run again on a fresh worker.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  parseEnv as parseCreativeEnv,
  startCreativeAgent,
  type RunningCreativeAgent,
} from '@adwire/app-creative-agent'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openRepository } from '../db/repository.js'
import { parseEnv } from '../env.js'
import { startRegistry, type RunningRegistry } from '../service.js'
import { startHoldingProxy, type HoldingProxy } from '../testing/proxy.js'
import { api, dropSchema, type Backend } from '../testing/registry.js'
import { runStore, type StoredRun } from './runs-store.js'

const postgresUrl = await resolveTestPostgresUrl()
const backends: Array<[string, Backend | undefined]> = [
  ['sqlite', { kind: 'sqlite' }],
  ['postgres', postgresUrl ? { kind: 'postgres', url: postgresUrl } : undefined],
]

let creative: RunningCreativeAgent
/** The creative agent behind a proxy that holds every request while closed. */
let gate: HoldingProxy
let gateUrl: string
let held = 0
let open = true
const waiting: Array<() => void> = []
let agentDir: string

beforeAll(async () => {
  agentDir = mkdtempSync(join(tmpdir(), 'adwire-registry-lease-'))
  creative = await startCreativeAgent(
    parseCreativeEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(agentDir, 'creative.sqlite')}`,
      TOKENS: 'kit-buyer:demo-acme-outdoor-v1:read+write',
    }),
  )
  gate = await startHoldingProxy(creative.url, (forward) => {
    if (open) forward()
    else {
      held += 1
      waiting.push(forward)
    }
  })
  gateUrl = gate.url
}, 60_000)

afterAll(async () => {
  for (const release of waiting.splice(0)) release()
  await gate?.close()
  await creative?.close()
  if (agentDir) rmSync(agentDir, { recursive: true, force: true })
})

const queued = (id: string, at: string): StoredRun => ({
  id,
  agent_url: 'https://agent.example/mcp',
  org_id: null,
  trigger: 'manual',
  storyboard_ids: ['capability_discovery'],
  options: { requestedComplianceTarget: '3.1' },
  state: 'queued',
  attempts: 0,
  lease_until: null,
  overall_status: 'queued',
  headline: null,
  tracks_passed: 0,
  tracks_failed: 0,
  tracks_skipped: 0,
  tracks_partial: 0,
  tracks: null,
  result: undefined,
  error: null,
  adcp_version: '3.1.19',
  requested_compliance_target: '3.1',
  total_duration_ms: null,
  created_at: at,
  started_at: null,
  finished_at: null,
})

const finished = {
  state: 'completed' as const,
  overall_status: 'passing',
  headline: 'done',
  tracks_passed: 1,
  tracks_failed: 0,
  tracks_skipped: 0,
  tracks_partial: 0,
  tracks: [],
  result: { done: true },
  error: null,
  adcp_version: '3.1.19',
  total_duration_ms: 1,
  finished_at: new Date().toISOString(),
}

describe.each(backends)('the compliance run queue on %s', (name, backend) => {
  let folder: string | undefined
  let schema: string | undefined
  const database = () =>
    backend!.kind === 'sqlite'
      ? { DATABASE_URL: `sqlite:${join(folder!, 'registry.sqlite')}` }
      : { DATABASE_URL: backend!.url, DATABASE_SCHEMA: schema! }

  beforeAll(() => {
    if (!backend) return
    if (backend.kind === 'sqlite') folder = mkdtempSync(join(tmpdir(), 'adwire-registry-lease-db-'))
    else schema = `registry_lease_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  })

  afterAll(async () => {
    if (folder) rmSync(folder, { recursive: true, force: true })
    if (schema && backend?.kind === 'postgres') await dropSchema(backend.url, schema)
  })

  it.skipIf(!backend)(
    `concurrent claimers get each run once, and an expired claim can neither renew nor finish (${name})`,
    async () => {
      const { repository } = await openRepository(parseEnv({ PORT: '0', ...database() }).database)
      try {
        const store = runStore(repository.driver)
        const ids = Array.from({ length: 12 }, () => crypto.randomUUID())
        for (const [index, id] of ids.entries())
          await store.create(queued(id, new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString()))
        const future = new Date(Date.now() + 60_000).toISOString()
        // Six claimers at once, each claiming until the queue is empty.
        const claimed = await Promise.all(
          Array.from({ length: 6 }, async () => {
            const mine: string[] = []
            for (;;) {
              const run = await store.claimNext(new Date().toISOString(), future)
              if (!run) return mine
              expect(run).toMatchObject({ state: 'running', attempts: 1, lease_until: future })
              mine.push(run.id)
            }
          }),
        )
        expect(claimed.flat().sort()).toEqual([...ids].sort())

        // A claim that stopped renewing: its lease expires, the run is requeued and claimed again.
        const [first] = ids
        const past = new Date(Date.now() - 1000).toISOString()
        expect(await store.renewLease(first!, 1, past)).toBe(true)
        const recovered = await store.recover(new Date().toISOString(), 2, [])
        expect(recovered.requeued).toEqual([first])
        const again = await store.claimNext(new Date().toISOString(), future)
        expect(again).toMatchObject({ id: first, attempts: 2, state: 'running' })
        // The first claim is fenced off: no renewal, no finish, no release.
        expect(await store.renewLease(first!, 1, future)).toBe(false)
        expect(await store.finish(first!, 1, finished, [], [])).toBe(false)
        await store.release(first!, 1)
        expect(await store.get(first!)).toMatchObject({ state: 'running', attempts: 2 })
        // The second claim holds it.
        expect(await store.renewLease(first!, 2, future)).toBe(true)
        expect(await store.finish(first!, 2, finished, [], [])).toBe(true)
        expect(await store.get(first!)).toMatchObject({ state: 'completed', attempts: 2 })
      } finally {
        await repository.close()
      }
    },
    60_000,
  )

  describe('a worker that dies mid-run', () => {
    let registry: RunningRegistry | undefined
    const logs: Array<Record<string, unknown>> = []

    afterAll(async () => {
      await registry?.close()
    })

    it.skipIf(!backend)(
      `leaves its run to the lease, which brings it back to a fresh worker (${name})`,
      async () => {
        registry = await startRegistry(
          parseEnv({
            PORT: '0',
            SEED: '0',
            ALLOW_PRIVATE_AGENTS: '1',
            AGENT_TIMEOUT_MS: '20000',
            RATE_LIMIT_READ_PER_MINUTE: '0',
            RATE_LIMIT_WRITE_PER_MINUTE: '0',
            RATE_LIMIT_CRAWL_PER_MINUTE: '0',
            ...database(),
          }),
          {
            validateResponses: 'strict',
            log: (entry) => void logs.push(entry),
            complianceLauncher: () => ({ launch: async () => ({ runIds: [] }) }),
            complianceRuns: { leaseMs: 3000, stepTimeoutMs: 20_000, runTimeoutMs: 60_000 },
          },
        )
        const { apiKey } = await registry.createOrg('Gate owner')
        const agentUrl = `${gateUrl}/mcp`
        const registered = await api(registry, 'registerMemberAgent', '/api/me/agents', {
          token: apiKey,
          body: { url: agentUrl, type: 'creative', visibility: 'public' },
        })
        expect(registered.status).toBe(201)

        open = false
        held = 0
        const response = await fetch(
          `${registry.url}/api/registry/agents/${encodeURIComponent(agentUrl)}/storyboard/capability_discovery/run`,
          { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, prefer: 'respond-async' } },
        )
        expect(response.status).toBe(202)
        const { run_id: runId } = (await response.json()) as { run_id: string }
        // The worker is talking to the agent: its first request is held at the gate.
        for (let tries = 0; held === 0; tries++) {
          expect(tries).toBeLessThan(1000)
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
        const claimed = await registry.complianceRuns.store.get(runId)
        expect(claimed).toMatchObject({ state: 'running', attempts: 1 })
        const firstWorker = registry.complianceWorker.threadId
        expect(firstWorker).toBeDefined()

        await registry.complianceWorker.crash()
        const crashedAt = Date.now()
        // Not finished, not requeued at once: the run is the dead claim's until its lease runs out.
        const right = await registry.complianceRuns.store.get(runId)
        expect(right).toMatchObject({ state: 'running', attempts: 1 })
        const leaseUntil = Date.parse(right!.lease_until!)
        expect(leaseUntil).toBeGreaterThan(crashedAt)
        let reclaimedAt: number | undefined
        for (let tries = 0; reclaimedAt === undefined; tries++) {
          expect(tries).toBeLessThan(1500)
          const now = await registry.complianceRuns.store.get(runId)
          if (now!.state !== 'running' || now!.attempts !== 1) reclaimedAt = Date.now()
          else await new Promise((resolve) => setTimeout(resolve, 20))
        }
        expect(reclaimedAt).toBeGreaterThanOrEqual(leaseUntil)

        open = true
        for (const release of waiting.splice(0)) release()
        const run = await registry.complianceRuns.wait(runId, 60_000)
        expect(run).toMatchObject({ state: 'completed', overall_status: 'passing', attempts: 2 })
        expect(registry.complianceWorker.threadId).not.toBe(firstWorker)
        expect(logs).toContainEqual(expect.objectContaining({ compliance_run: runId, worker: 'died' }))
        expect(logs).toContainEqual(expect.objectContaining({ compliance_recovered: [runId] }))
      },
      120_000,
    )
  })
})
