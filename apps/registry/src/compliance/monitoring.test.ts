/**
 * The monitoring scheduler survives a restart, on SQLite and PostgreSQL, with an injected clock: a heartbeat
 * fires for a newly registered agent, the registry stops, a new one starts on the same database before the
 * next heartbeat is due (nothing fires), then fires it as soon as the clock reaches the due time; an agent that
 * came due while no registry ran fires at start. The heartbeat history (`monitoring/requests`) spans restarts.
 */
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, describe, expect, it } from 'vitest'
import { api, type Backend } from '../testing/registry.js'
import {
  startStatusRegistry,
  statusDatabase,
  type StatusDatabase,
  type StatusRegistry,
} from './status-testing.js'

const postgresUrl = await resolveTestPostgresUrl()
const backends: Array<[string, Backend | undefined]> = [
  ['sqlite', { kind: 'sqlite' }],
  ['postgres', postgresUrl ? { kind: 'postgres', url: postgresUrl } : undefined],
]

const HOUR = 3_600_000

async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 8000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe.each(backends)('monitoring across restarts on %s', (name, backend) => {
  let database: StatusDatabase | undefined
  let running: StatusRegistry | undefined

  afterAll(async () => {
    await running?.registry.close()
    await database?.cleanup()
  })

  it.skipIf(!backend)('fires heartbeats on time from the stored schedule after a restart', async () => {
    database = statusDatabase(backend!)
    const start = Date.parse('2026-03-01T00:00:00.000Z')
    let clock = start
    const now = () => clock
    const agentUrl = 'https://monitored.example/mcp'
    const path = `/api/registry/agents/${encodeURIComponent(agentUrl)}`

    // First life: registration makes the agent due at once; the first heartbeat fires.
    running = await startStatusRegistry(database, { now })
    const key = (await running.registry.createOrg('Monitor')).apiKey
    expect(
      (
        await api(running.registry, 'registerMemberAgent', '/api/me/agents', {
          token: key,
          body: { url: agentUrl, type: 'sales' },
        })
      ).status,
    ).toBe(201)
    await eventually(() => running!.launcher.launches.length === 1)
    expect(running.launcher.launches[0]).toMatchObject({ agentUrl, trigger: 'heartbeat', at: start })
    const interval = await api(
      running.registry,
      'updateAgentMonitoringInterval',
      `${path}/monitoring/interval`,
      {
        method: 'PUT',
        token: key,
        body: { interval_hours: 6 },
      },
    )
    expect(interval.body.check_interval_hours).toBe(6)
    await running.launcher.idle()
    await running.registry.close()

    // Second life, one minute before the next heartbeat: nothing fires.
    clock = start + 6 * HOUR - 60_000
    running = await startStatusRegistry(database, { now })
    await new Promise((resolve) => setTimeout(resolve, 2500))
    expect(running.launcher.launches).toEqual([])
    const history = await api(running.registry, 'getAgentMonitoringRequests', `${path}/monitoring/requests`, {
      token: key,
    })
    expect(history.body.requests).toEqual([
      expect.objectContaining({
        request_type: 'compliance_heartbeat',
        created_at: new Date(start).toISOString(),
      }),
    ])

    // The due time arrives: the heartbeat fires within the scheduler's poll (1 s here).
    clock = start + 6 * HOUR + 1000
    const moved = Date.now()
    await eventually(() => running!.launcher.launches.length === 1, 5000)
    // Poll 1 s, plus slack for a loaded machine.
    expect(Date.now() - moved).toBeLessThan(2500)
    expect(running.launcher.launches[0]).toMatchObject({ agentUrl, trigger: 'heartbeat', at: clock })
    await running.launcher.idle()
    const after = await api(running.registry, 'getAgentMonitoringRequests', `${path}/monitoring/requests`, {
      token: key,
    })
    expect(after.body.requests.map((entry: { created_at: string }) => entry.created_at)).toEqual([
      new Date(start + 6 * HOUR + 1000).toISOString(),
      new Date(start).toISOString(),
    ])
    expect(
      (await api(running.registry, 'getAgentCompliance', `${path}/compliance`)).body.last_checked_at,
    ).toBe(new Date(start + 6 * HOUR + 1000).toISOString())
    await running.registry.close()

    // Third life, started after the next due time passed while no registry ran: it fires at start.
    clock = start + 13 * HOUR
    const started = Date.now()
    running = await startStatusRegistry(database, { now })
    await eventually(() => running!.launcher.launches.length === 1, 5000)
    expect(Date.now() - started).toBeLessThan(5000)
    expect(running.launcher.launches[0]!.at).toBe(clock)
    // And only once, though the scheduler keeps polling.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(running.launcher.launches).toHaveLength(1)
  })

  it.skipIf(!backend)('fires each heartbeat once when two registries share the database', async () => {
    const shared = statusDatabase(backend!)
    const clock = Date.parse('2026-04-01T00:00:00.000Z')
    const first = await startStatusRegistry(shared, { now: () => clock })
    const second = await startStatusRegistry(shared, { now: () => clock })
    try {
      const key = (await first.registry.createOrg('Shared')).apiKey
      for (const index of [1, 2, 3, 4, 5, 6]) {
        await api(first.registry, 'registerMemberAgent', '/api/me/agents', {
          token: key,
          body: { url: `https://shared-${index}.example/mcp`, type: 'sales' },
        })
      }
      // Both claim the due agents at the same moment (besides their own timers).
      await Promise.all([first.registry.monitoring!.runDue(), second.registry.monitoring!.runDue()])
      const total = () => first.launcher.launches.length + second.launcher.launches.length
      await eventually(() => total() >= 6)
      // Both schedulers keep polling (1 s): no agent fires twice.
      await new Promise((resolve) => setTimeout(resolve, 2500))
      const fired = [...first.launcher.launches, ...second.launcher.launches].map((launch) => launch.agentUrl)
      expect(fired.sort()).toEqual([1, 2, 3, 4, 5, 6].map((index) => `https://shared-${index}.example/mcp`))
    } finally {
      await first.registry.close()
      await second.registry.close()
      await shared.cleanup()
    }
  })

  if (!backend) it.skip(`${name}: no PostgreSQL (ADWIRE_TEST_POSTGRES_URL)`, () => {})
})
