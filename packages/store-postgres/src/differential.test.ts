/**
 * The PostgreSQL stores against the in-memory reference implementations (@adwire/webhooks,
 * @adwire/http-signatures): the same seeded random sequences of operations, over small keyspaces and a clock
 * that steps across leases and retentions, must give the same answers. Fences are random in both, so each
 * side keeps its own and the answers are compared with fences left out.
 */
import { MemoryReplayStore, type ReplayStore } from '@adwire/http-signatures'
import { dropSchema, freshSchemaName, resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import {
  MemoryClaimStore,
  MemoryConvergenceStore,
  MemoryOutboxStore,
  type AttemptOutcome,
  type ClaimRef,
  type ClaimStore,
  type ConvergenceStore,
  type OutboxStore,
} from '@adwire/webhooks'
import { describe, expect, it } from 'vitest'
import { openPostgresStores } from './open.js'

const url = await resolveTestPostgresUrl()

/** A seeded generator (xorshift32), so that a failing sequence can be replayed from its seed. */
function generator(seed: number) {
  let state = seed || 1
  const next = () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 4_294_967_296
  }
  return { pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]! }
}

interface Side {
  claims: ClaimStore
  convergence: ConvergenceStore
  outbox: OutboxStore
  replay: ReplayStore
  claimed: ClaimRef[]
  leased: { id: string; fence: string }[]
}

const withoutFence = (value: unknown) =>
  JSON.parse(JSON.stringify(value, (key, item: unknown) => (key === 'fence' ? undefined : item))) as unknown

/** One random operation on a side; resolves with its answer, fences left out. */
async function step(
  side: Side,
  random: ReturnType<typeof generator>,
  now: number,
  serial: number,
): Promise<unknown> {
  const { pick } = random
  switch (
    pick([
      'claim',
      'claim',
      'complete',
      'release',
      'observe',
      'observe',
      'settle',
      'enqueue',
      'lease',
      'record',
      'read',
      'closed',
      'replay',
      'replay',
      'sweep',
    ])
  ) {
    case 'claim': {
      const input = {
        namespace: pick(['webhook', 'request'] as const),
        scope: pick(['s1', 's2']),
        key: pick(['k1', 'k2', 'k3']),
        fingerprint: pick(['a', 'b']).repeat(64),
        now,
        leaseSeconds: pick([5, 20]),
        retentionSeconds: pick([40, 200]),
        ...(pick([true, false]) ? { maxPerScope: pick([1, 2, 3]) } : {}),
      }
      const result = await side.claims.claim(input)
      if (result.kind === 'claimed') side.claimed.push({ ...input, fence: result.fence })
      return withoutFence(result)
    }
    case 'complete':
    case 'release': {
      const ref = side.claimed.length > 0 ? pick(side.claimed) : undefined
      if (!ref) return 'nothing claimed'
      const target = pick([true, true, false]) ? ref : { ...ref, fence: 'not-a-fence' }
      if (pick([true, false])) return side.claims.complete(target, now, pick([null, `result-${serial}`]))
      await side.claims.release(target)
      return 'released'
    }
    case 'observe':
      return side.convergence.observe({
        sender: pick(['seller-1', 'seller-2']),
        taskId: pick(['t1', 't2']),
        terminal: pick([true, true, false]),
        comparison: pick(['1', '2']).repeat(64),
        deliveryKey: pick(['d1', 'd2', 'd3']),
        now,
        leaseSeconds: pick([5, 20]),
        retentionSeconds: pick([40, 200]),
      })
    case 'settle': {
      const args = [pick(['seller-1', 'seller-2']), pick(['t1', 't2']), pick(['d1', 'd2', 'd3'])] as const
      if (pick([true, false])) await side.convergence.settle(...args, now)
      else await side.convergence.release(...args)
      return 'done'
    }
    case 'enqueue':
      return side.outbox.enqueue({
        id: `entry-${serial}`,
        destination: pick(['r1', 'r2']),
        url: 'https://buyer.example/webhooks',
        idempotencyKey: `idempotency-key-${serial}`.padEnd(24, 'x'),
        body: `{"serial":${serial}}`,
        headers: { 'content-type': 'application/json' },
        coalesceKey: pick([null, 'media_buy:1', 'media_buy:2']),
        createdAt: now,
        nextAttemptAt: now + pick([0, 0, 5]),
        deadlineAt: now + 100,
        mediaBuyIds: pick([[], [], ['m1'], ['m2'], ['m1', 'm2'], ['m3', 'm1', 'm3'], ['m4']]),
        barrier: pick([true, false, false, false, false]),
      })
    case 'closed': {
      const buys = pick([['m1'], ['m2', 'm5'], ['m4', 'm3', 'm4'], ['m6']])
      return pick([true, false, false])
        ? side.outbox.closeMediaBuys(buys, now)
        : side.outbox.closedMediaBuys(buys)
    }
    case 'lease': {
      const leased = await side.outbox.lease(now, pick([1, 2, 5]), pick([5, 20]))
      side.leased.push(...leased.map((entry) => ({ id: entry.id, fence: entry.fence })))
      return withoutFence(leased)
    }
    case 'record': {
      const lease = side.leased.length > 0 ? pick(side.leased) : undefined
      if (!lease) return 'nothing leased'
      const outcome = pick<AttemptOutcome>([
        { kind: 'delivered', httpStatus: 200 },
        {
          kind: 'retry',
          nextAttemptAt: now + pick([1, 10]),
          httpStatus: 503,
          error: 'HTTP 503',
          activityStatus: 'failed',
        },
        { kind: 'retry', nextAttemptAt: now + 2, error: 'timed out', activityStatus: 'timeout' },
        { kind: 'failed', httpStatus: 410, activityStatus: 'failed' },
      ])
      return side.outbox.record(lease.id, pick([true, true, false]) ? lease.fence : 'stale', outcome, now)
    }
    case 'read': {
      const destination = pick(['r1', 'r2', undefined])
      return [
        await side.outbox.pending(destination),
        destination === undefined ? [] : await side.outbox.activity(destination, pick([1, 3, 100])),
      ]
    }
    case 'replay': {
      const keyid = pick(['kid-1', 'kid-2'])
      const cap = pick([1, 2, 100])
      switch (pick(['remember', 'remember', 'seen', 'atCapacity'])) {
        case 'remember':
          return side.replay.remember(
            keyid,
            pick(['n1', 'n2', 'n3', 'n4', 'n5']),
            now + pick([5, 20, 40]),
            cap,
            now,
          )
        case 'seen':
          return side.replay.seen(keyid, pick(['n1', 'n2', 'n3', 'n4', 'n5']), now)
        default:
          return side.replay.atCapacity(keyid, cap, now)
      }
    }
    default:
      // The counts are not compared: each implementation drops expired records at other moments too (the
      // in-memory ones when a key is touched again, PostgreSQL when a scope at its cap makes room). What the
      // stores answer afterwards is compared.
      await side.claims.sweep(now)
      await side.convergence.sweep(now)
      return 'swept'
  }
}

if (!url) {
  describe.skip('PostgreSQL stores against the in-memory ones (ADWIRE_TEST_POSTGRES_URL unset or unreachable)', () => {
    it('needs a PostgreSQL server', () => {})
  })
} else {
  describe('PostgreSQL stores against the in-memory ones', () => {
    it.each([1, 2, 3, 4, 5, 6])('answer alike over 300 random operations (seed %i)', async (seed) => {
      const schema = freshSchemaName()
      const postgres = await openPostgresStores({ connectionString: url, schema, maxConnections: 2 })
      try {
        const memory: Side = {
          claims: new MemoryClaimStore(),
          convergence: new MemoryConvergenceStore(),
          outbox: new MemoryOutboxStore(),
          replay: new MemoryReplayStore(),
          claimed: [],
          leased: [],
        }
        const durable: Side = { ...postgres, claimed: [], leased: [] }
        const randomMemory = generator(seed)
        const randomDurable = generator(seed)
        const clock = generator(seed * 7_919)
        let now = 1_000
        for (let serial = 0; serial < 300; serial += 1) {
          now += clock.pick([0, 0, 0, 1, 1, 2, 5, 13])
          const expected = await step(memory, randomMemory, now, serial)
          const actual = await step(durable, randomDurable, now, serial)
          expect(actual, `seed ${seed}, step ${serial}, now ${now}`).toEqual(expected)
        }
        await postgres.sweep(now)
      } finally {
        await postgres.close()
        await dropSchema(url, schema)
      }
    })
  })
}
