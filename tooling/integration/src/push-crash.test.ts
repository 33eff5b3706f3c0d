/**
 * Every push of the sales agent is atomic with the state change it announces. The agent (its own process, on
 * SQLite, then on a PostgreSQL schema of its own) is driven through many state changes of many accounts,
 * creatives and buys (push-crash-workload.ts), SIGKILLed at random moments with calls on the wire, and
 * restarted on the same database each time; the reference receiver (apps/receiver) takes every push, behind a
 * proxy that sees each delivery. Once the agent has settled, the state is read back and the receiver's count is
 * compared with what it owes (push-crash-verdict.ts):
 * - every change that happened (acknowledged, or read back after a cut call) is published exactly once:
 *   account.status_changed, creative.status_changed, the buy's impairment for a suspended creative, the review
 *   task's working and completed, every delivery report before the final one, and the final report;
 * - under one idempotency_key (a second key for one change on the wire is a duplicate, even when the receiver
 *   would fold it into one publication);
 * - and nothing else: no push for a change that was not stored.
 * A task status that reaches the receiver after the task's terminal one is answered stale (the receiver
 * converges on the terminal status): it counts as delivered. Not driven here: capabilities.changed (it fires for
 * a new capability snapshot, never on a restart of the same build), creative.purged, A2A task events, the
 * coalesced impairments (only suspensions, whose class is never coalesced, so each one owes its push), and
 * delayed / adjusted / window_update reports (they would take sequence numbers, which the check covers).
 * ADWIRE_CRASH_CHANGES sets how many changes (default 60, a CI-sized run; the acceptance run is 1000), and
 * ADWIRE_CRASH_SEED the lanes' choices and kill gaps (printed in the summary line).
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { describe, expect, it } from 'vitest'
import { CrashAgent } from './push-crash-agent.js'
import { BuyerSide } from './push-crash-receiver.js'
import { drain, verdict } from './push-crash-verdict.js'
import { runWorkload } from './push-crash-workload.js'
import { dropSchema, freshSchema } from './receiver-support.js'

const postgresUrl = await resolveTestPostgresUrl()
const CHANGES = Number(process.env.ADWIRE_CRASH_CHANGES ?? 60)
const SEED = Number(process.env.ADWIRE_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31))
const TOKEN = 'crash-buyer-token-0123456789abcdef'
/** Generous: a change takes some tens of milliseconds, a restart a second or two. */
const TIMEOUT_MS = 90_000 + CHANGES * 600

const AGENT_ENV = {
  TOKENS: `crash-buyer:${TOKEN}:read+write+delete+approve`,
  // Its accounts are sandbox: comply_test_controller serves it.
  SANDBOX_PRINCIPALS: 'crash-buyer',
  COMPLY_TEST_CONTROLLER: '1',
  ALLOW_INSECURE_WEBHOOK_URLS: '1',
  // Every buy goes through the seller's review (due work): its task statuses are pushed as it runs.
  BUY_REVIEW: 'always',
  REVIEW_SECONDS: '0',
  DUE_TICK_MS: '100',
  REPORT_PERIOD_SECONDS: '2',
  REPORT_TICK_MS: '250',
  SENDER_TIMEOUT_MS: '5000',
}

const seconds = (from: number, to = Date.now()) => ((to - from) / 1000).toFixed(1)
const average = (values: readonly number[]) =>
  values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length

async function crashRun(store: string, databaseEnv: Record<string, string>): Promise<void> {
  const started = Date.now()
  const directory = mkdtempSync(path.join(tmpdir(), 'adwire-push-crash-'))
  // Each restart stands for one after the dead process's leases ran out (due work 120 s, in-flight 300 s).
  const agent = await CrashAgent.start({
    env: { ...AGENT_ENV, ...databaseEnv },
    token: TOKEN,
    restartJumpSeconds: 310,
  })
  let buyer: BuyerSide | undefined
  try {
    const jwks = await (await fetch(`${agent.url}/.well-known/jwks.json`)).json()
    buyer = await BuyerSide.start(directory, agent.now)
    await buyer.register(jwks)
    const workload = Date.now()
    const ledger = await runWorkload(agent, buyer, {
      changes: CHANGES,
      seed: SEED,
      killGap: [15, 35],
      buyLanes: 4,
      accountLanes: 2,
    })
    const drained = Date.now()
    await drain(buyer, ledger)
    const result = await verdict(buyer, ledger)
    const steps = ledger.steps.filter((step) => step.happened).length
    const changes = steps + ledger.taskTransitions
    const cut = ledger.steps.filter((step) => step.cut).length
    // A create carried out twice under one idempotency_key shows as a second task for its operation_id.
    const tasksOf = new Map<string, Set<string>>()
    for (const [task, operation] of ledger.tasks) tasksOf.set(operation, new Set([task]))
    for (const push of [...buyer.wire(), ...buyer.published()])
      if (push.event.kind === 'task' && push.event.operationId && push.event.taskId)
        tasksOf.set(
          push.event.operationId,
          (tasksOf.get(push.event.operationId) ?? new Set()).add(push.event.taskId),
        )
    const doubled = [...tasksOf].filter(([, tasks]) => tasks.size > 1).map(([operation]) => operation)
    const kinds = Object.entries(result.byKind)
      .filter(([, count]) => count.expected + count.unexpected > 0)
      .map(
        ([kind, c]) =>
          `${kind} ${c.received}/${c.expected}${c.lost ? ` -${c.lost}` : ''}${c.duplicated ? ` x${c.duplicated}` : ''}${c.unexpected ? ` +${c.unexpected}` : ''}`,
      )
      .join(', ')
    console.log(
      `push crash ${store}: ${changes} changes (${steps} calls, ${ledger.taskTransitions} task moves), ` +
        `${agent.kills} kills (restart ${seconds(0, average(agent.restartMs))} s), ${cut} calls cut; pushes expected ${result.expected}, received ${result.received}, ` +
        `duplicated ${result.duplicated.length}, lost ${result.lost.length}, unexpected ${result.unexpected.length}; ` +
        `${result.deliveries} deliveries, ${result.stale.length} stale, ` +
        `refused ${JSON.stringify(result.refused)}, ${doubled.length} doubled creates, ${ledger.unknownBuys.length} unknown buys, ` +
        `${ledger.openTasks.length} open tasks, ${ledger.waitsRanOut.length} waits ran out; ${seconds(started)} s (setup ${seconds(started, workload)}, ` +
        `changes ${seconds(workload, drained)}, drain ${seconds(drained)}), seed ${SEED}\n` +
        `  by kind (received/expected -lost xduplicated +unexpected): ${kinds}`,
    )
    expect(changes).toBeGreaterThanOrEqual(CHANGES)
    expect(agent.kills).toBeGreaterThanOrEqual(Math.max(1, Math.floor(CHANGES / 40)))
    for (const kind of ['account', 'creative', 'task', 'final'] as const)
      expect(result.byKind[kind].expected, kind).toBeGreaterThan(0)
    // Soft: a failing run lists every kind of problem it found, not only the first.
    expect.soft(result.lost, 'owed pushes the receiver never published').toEqual([])
    expect.soft(result.duplicated, 'changes announced under more than one idempotency_key').toEqual([])
    expect.soft(result.unexpected, 'pushes of changes that were not stored').toEqual([])
    expect.soft(result.listedMismatch, "the receiver's events API against what it published").toEqual([])
    expect.soft(doubled, 'creates carried out twice under one idempotency_key').toEqual([])
    expect.soft(ledger.missingTasks, 'pushes naming tasks the seller does not hold').toEqual([])
  } finally {
    await agent.stop()
    await buyer?.close()
  }
}

describe('every push of the sales agent is atomic with its state change, across SIGKILLs', () => {
  it(
    'SQLite',
    async () => {
      const file = path.join(mkdtempSync(path.join(tmpdir(), 'adwire-push-crash-')), 'sales-agent.sqlite')
      await crashRun('sqlite', { DATABASE_URL: `sqlite:${file}` })
    },
    TIMEOUT_MS,
  )

  it.skipIf(!postgresUrl)(
    'PostgreSQL',
    async () => {
      const schema = freshSchema('adwire_push_crash')
      try {
        await crashRun('postgres', { DATABASE_URL: postgresUrl!, DATABASE_SCHEMA: schema })
      } finally {
        await dropSchema(postgresUrl!, schema)
      }
    },
    TIMEOUT_MS,
  )
})
