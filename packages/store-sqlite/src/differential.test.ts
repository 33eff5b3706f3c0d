/**
 * The SQLite stores against the in-memory reference implementations of @adwire/webhooks: the same random
 * sequences of operations (small keyspaces, a clock that moves in steps around the lease and retention)
 * must give the same answers, fences aside.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  MemoryClaimStore,
  MemoryConvergenceStore,
  MemoryOutboxStore,
  type AttemptOutcome,
  type ClaimNamespace,
  type LeasedOutboxEntry,
} from '@adwire/webhooks'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqliteStores } from './index.js'

const directory = mkdtempSync(join(tmpdir(), 'adwire-store-sqlite-differential-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

/** mulberry32: a seeded generator, so that a failing sequence can be replayed. */
function random(seed: number) {
  let state = seed
  const next = () => {
    state = (state + 0x6d2b79f5) | 0
    let value = Math.imul(state ^ (state >>> 15), 1 | state)
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296
  }
  return {
    below: (bound: number) => Math.floor(next() * bound),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
  }
}

const seeds = [1, 2, 3, 4, 5, 6, 7, 8]
const steps = 400

describe('same answers as the in-memory stores', () => {
  it.each(seeds)('claims, seed %i', async (seed) => {
    const sqlite = openSqliteStores({ path: join(directory, `claims-${seed}.db`) })
    const memory = new MemoryClaimStore()
    const pick = random(seed)
    // Fences each side obtained, in the same order: fence i of one side stands for fence i of the other.
    const fences: Array<{
      memory: string
      sqlite: string
      namespace: ClaimNamespace
      scope: string
      key: string
    }> = []
    let now = 1_000
    for (let step = 0; step < steps; step += 1) {
      now += pick.pick([0, 0, 1, 5, 20, 31])
      const operation = pick.below(10)
      if (operation < 5) {
        const input = {
          namespace: pick.pick(['webhook', 'request'] as const),
          scope: pick.pick(['s1', 's2']),
          key: pick.pick(['k1', 'k2', 'k3', 'k4']),
          fingerprint: pick.pick(['f1', 'f2']),
          now,
          leaseSeconds: 30,
          retentionSeconds: pick.pick([150, 400]),
          ...(pick.below(2) ? { maxPerScope: 2 } : {}),
        }
        const [expected, actual] = [await memory.claim(input), await sqlite.claims.claim(input)]
        if (expected.kind === 'claimed' && actual.kind === 'claimed') {
          expect(actual.takeover, `step ${step}`).toBe(expected.takeover)
          fences.push({ memory: expected.fence, sqlite: actual.fence, ...input })
        } else {
          expect(actual, `step ${step}`).toEqual(expected)
        }
      } else if (operation < 8 && fences.length > 0) {
        const held = pick.pick(fences)
        const ref = { namespace: held.namespace, scope: held.scope, key: held.key }
        if (operation < 7) {
          const result = pick.pick([null, 'r1', 'r2'])
          expect(
            await sqlite.claims.complete({ ...ref, fence: held.sqlite }, now, result),
            `step ${step}`,
          ).toBe(await memory.complete({ ...ref, fence: held.memory }, now, result))
        } else {
          await memory.release({ ...ref, fence: held.memory })
          await sqlite.claims.release({ ...ref, fence: held.sqlite })
        }
      } else if (operation === 9) {
        expect(await sqlite.claims.sweep(now), `step ${step}`).toBe(await memory.sweep(now))
      }
    }
    sqlite.close()
  })

  it.each(seeds)('convergence, seed %i', async (seed) => {
    const sqlite = openSqliteStores({ path: join(directory, `convergence-${seed}.db`) })
    const memory = new MemoryConvergenceStore()
    const pick = random(seed)
    let now = 1_000
    for (let step = 0; step < steps; step += 1) {
      now += pick.pick([0, 1, 5, 20, 31, 60])
      const operation = pick.below(10)
      const task = {
        sender: 'seller',
        taskId: pick.pick(['t1', 't2']),
        deliveryKey: pick.pick(['d1', 'd2', 'd3']),
      }
      if (operation < 6) {
        const observation = {
          ...task,
          terminal: pick.below(3) > 0,
          comparison: pick.pick(['c1', 'c2']),
          now,
          leaseSeconds: 30,
          retentionSeconds: 150,
        }
        expect(await sqlite.convergence.observe(observation), `step ${step}`).toBe(
          await memory.observe(observation),
        )
      } else if (operation < 8) {
        await memory.settle(task.sender, task.taskId, task.deliveryKey)
        await sqlite.convergence.settle(task.sender, task.taskId, task.deliveryKey, now)
      } else if (operation === 8) {
        await memory.release(task.sender, task.taskId, task.deliveryKey)
        await sqlite.convergence.release(task.sender, task.taskId, task.deliveryKey)
      } else {
        expect(await sqlite.convergence.sweep(now), `step ${step}`).toBe(await memory.sweep(now))
      }
    }
    sqlite.close()
  })

  it.each(seeds)('outbox, seed %i', async (seed) => {
    const sqlite = openSqliteStores({ path: join(directory, `outbox-${seed}.db`) })
    const memory = new MemoryOutboxStore()
    const pick = random(seed)
    const leases: Array<{ memory: LeasedOutboxEntry; sqlite: LeasedOutboxEntry }> = []
    const unfenced = ({ fence: _fence, ...entry }: LeasedOutboxEntry) => entry
    let now = 1_000
    let ids = 0
    for (let step = 0; step < steps; step += 1) {
      now += pick.pick([0, 0, 1, 5, 20, 31])
      const operation = pick.below(12)
      const destination = pick.pick(['r1', 'r2'])
      if (operation < 4) {
        ids += 1
        const entry = {
          id: `e${ids}`,
          destination,
          url: `https://buyer.example/${destination}`,
          idempotencyKey: `idem-${ids}`,
          body: `{"n":${ids}}`,
          headers: { 'content-type': 'application/json', 'x-n': String(ids) },
          coalesceKey: pick.pick([null, 'a', 'b']),
          createdAt: now,
          nextAttemptAt: now + pick.pick([0, 0, 10, 40]),
          deadlineAt: now + 1_000,
          mediaBuyIds: pick.pick([[], [], ['m1'], ['m2'], ['m1', 'm2'], ['m3', 'm1', 'm3'], ['m4']]),
          barrier: pick.below(6) === 0,
        }
        expect(await sqlite.outbox.enqueue(entry), `step ${step}`).toEqual(await memory.enqueue(entry))
      } else if (operation < 6) {
        const [limit, leaseSeconds] = [pick.pick([1, 2, 3, 100]), pick.pick([20, 60])]
        const [expected, actual] = [
          await memory.lease(now, limit, leaseSeconds),
          await sqlite.outbox.lease(now, limit, leaseSeconds),
        ]
        expect(actual.map(unfenced), `step ${step}`).toEqual(expected.map(unfenced))
        expected.forEach((entry, index) => leases.push({ memory: entry, sqlite: actual[index]! }))
      } else if (operation < 9 && leases.length > 0) {
        const held = pick.pick(leases)
        const outcome: AttemptOutcome = pick.pick<AttemptOutcome>([
          { kind: 'delivered', httpStatus: 204 },
          {
            kind: 'retry',
            nextAttemptAt: now + 15,
            httpStatus: 503,
            error: 'HTTP 503',
            activityStatus: 'failed',
          },
          { kind: 'retry', nextAttemptAt: now + 5, activityStatus: 'timeout' },
          { kind: 'failed', httpStatus: 410, activityStatus: 'failed' },
        ])
        const stale = pick.below(5) === 0
        expect(
          await sqlite.outbox.record(held.sqlite.id, stale ? 'stale' : held.sqlite.fence, outcome, now),
          `step ${step}`,
        ).toBe(await memory.record(held.memory.id, stale ? 'stale' : held.memory.fence, outcome, now))
      } else if (operation < 10) {
        const limit = pick.pick([undefined, 1, 5])
        expect(await sqlite.outbox.activity(destination, limit), `step ${step}`).toEqual(
          await memory.activity(destination, limit),
        )
      } else if (operation < 11) {
        const which = pick.pick([undefined, destination])
        expect(await sqlite.outbox.pending(which), `step ${step}`).toEqual(await memory.pending(which))
      } else {
        const buys = pick.pick([['m1'], ['m2', 'm5'], ['m4', 'm3', 'm4'], ['m6']])
        if (pick.below(3) === 0)
          expect(await sqlite.outbox.closeMediaBuys(buys, now), `step ${step}`).toEqual(
            await memory.closeMediaBuys(buys, now),
          )
        else
          expect(await sqlite.outbox.closedMediaBuys(buys), `step ${step}`).toEqual(
            await memory.closedMediaBuys(buys),
          )
      }
    }
    sqlite.close()
  })
})
