/**
 * The contract every store implementation passes: memory (in @adwire/webhooks and @adwire/http-signatures),
 * SQLite and PostgreSQL run the same suite, so that a behaviour is either true of all three or tested as a
 * difference.
 *
 * @example
 * describeStoreContract('sqlite', ['claims', 'convergence', 'outbox', 'replay', 'inbox'], async () => {
 *   const stores = openSqliteStores({ path: file })
 *   return { ...stores, close: async () => stores.close() }
 * })
 */
import { NONCE_HORIZON_SECONDS, nonceCapForRate, type ReplayStore } from '@adwire/http-signatures'
import type {
  ClaimInput,
  ClaimStore,
  ConvergenceStore,
  LeasedOutboxEntry,
  OutboxStore,
  ReceivedEvent,
  TaskObservation,
} from '@adwire/webhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { describeInboxContract, type ContractInbox } from './inbox.js'
import { outboxEntry } from './entries.js'

export { describeSenderFinalRules, type SenderStores } from './sender.js'
export { outboxEntry } from './entries.js'
export { expectFinalRollbackReopens, type TransactionalOutbox } from './final-rollback.js'
export { inboxDelivery, type ContractInbox } from './inbox.js'
export { ACTIVITY_DESTINATION, seedActivity } from './activity.js'

export interface ContractStores {
  readonly claims?: ClaimStore
  readonly convergence?: ConvergenceStore
  readonly outbox?: OutboxStore
  readonly replay?: ReplayStore
  /**
   * The replay rows held for a keyid: `stored` (expired or not, until swept) and `live` (expiring after `now`),
   * for the bounded-rows checks of the `replay` section.
   */
  replayRows?(keyid: string, now: number): Promise<{ stored: number; live: number }>
  /** The store's transactional inbox, its writer storing rows the suite reads back (the `inbox` section). */
  openInbox?(fail: (event: ReceivedEvent) => boolean): Promise<ContractInbox>
  /**
   * Whether the store expires records by dropping whole partitions (PostgreSQL since migration 6): a sweep just
   * past a record's retention may drop nothing yet, so only what the record then decides is checked, not the
   * sweep's count.
   */
  readonly expiresByPartition?: boolean
  /** A second handle on the same data (another connection or process-like client), when the store has one. */
  readonly peer?: Omit<ContractStores, 'peer' | 'close' | 'openInbox'>
  close?(): Promise<void>
}

let counter = 0
/** A name no earlier test used, so suites need no cleanup between tests. */
const unique = (prefix: string) =>
  `${prefix}-${Date.now().toString(36)}-${(counter += 1)}-${Math.random().toString(36).slice(2, 8)}`

/** The stores a suite provides. */
export type StoreKind = 'claims' | 'convergence' | 'outbox' | 'replay' | 'inbox'

/**
 * Declares the contract suite for the stores `provides` names. `open` resolves with the stores, or with
 * undefined to skip (a PostgreSQL suite without a server on a developer machine).
 */
export function describeStoreContract(
  name: string,
  provides: readonly StoreKind[],
  open: () => Promise<ContractStores | undefined>,
): void {
  const section = (kind: StoreKind, body: () => void) =>
    provides.includes(kind) ? describe(kind, body) : undefined
  describe(`store contract: ${name}`, () => {
    let stores: ContractStores | undefined
    beforeAll(async () => {
      stores = await open()
    })
    afterAll(async () => {
      await stores?.close?.()
    })
    const get = <K extends 'claims' | 'convergence' | 'outbox' | 'replay'>(
      key: K,
    ): NonNullable<ContractStores[K]> => {
      const store = stores?.[key]
      if (!store) throw new Error(`${name} did not open its ${key} store`)
      return store as NonNullable<ContractStores[K]>
    }

    section('claims', () => {
      const base = (overrides: Partial<ClaimInput> = {}): ClaimInput => ({
        namespace: 'webhook',
        scope: unique('sender'),
        key: unique('key'),
        fingerprint: 'a'.repeat(64),
        now: 1_000,
        leaseSeconds: 30,
        retentionSeconds: 86_400,
        ...overrides,
      })

      it('claims a new key once; the same payload in flight is processing; another payload conflicts', async () => {
        const claims = get('claims')
        const input = base()
        const first = await claims.claim(input)
        expect(first).toMatchObject({ kind: 'claimed', takeover: false })
        expect(await claims.claim({ ...input, now: 1_010 })).toEqual({
          kind: 'processing',
          leaseExpiresAt: 1_030,
        })
        expect(await claims.claim({ ...input, fingerprint: 'b'.repeat(64) })).toEqual({ kind: 'conflict' })
      })

      it('completes with a result that later claims see; a lost fence cannot complete', async () => {
        const claims = get('claims')
        const input = base({ namespace: 'request' })
        const first = await claims.claim(input)
        if (first.kind !== 'claimed') throw new Error('expected a claim')
        const ref = { namespace: input.namespace, scope: input.scope, key: input.key }
        expect(await claims.complete({ ...ref, fence: 'not-the-fence' }, 1_001, 'x')).toBe(false)
        expect(await claims.complete({ ...ref, fence: first.fence }, 1_001, '{"ok":true}')).toBe(true)
        expect(await claims.claim({ ...input, now: 2_000 })).toEqual({
          kind: 'completed',
          result: '{"ok":true}',
        })
        expect(await claims.claim({ ...input, fingerprint: 'c'.repeat(64) })).toEqual({ kind: 'conflict' })
      })

      it('hands an expired lease to the next delivery, and fences out the old owner', async () => {
        const claims = get('claims')
        const input = base()
        const first = await claims.claim(input)
        const second = await claims.claim({ ...input, now: 1_031 })
        expect(second).toMatchObject({ kind: 'claimed', takeover: true })
        if (first.kind !== 'claimed' || second.kind !== 'claimed') throw new Error('expected claims')
        expect(second.fence).not.toBe(first.fence)
        const ref = { namespace: input.namespace, scope: input.scope, key: input.key }
        expect(await claims.complete({ ...ref, fence: first.fence }, 1_032)).toBe(false)
        expect(await claims.complete({ ...ref, fence: second.fence }, 1_032)).toBe(true)
        expect(await claims.claim({ ...input, now: 1_033 })).toEqual({ kind: 'completed', result: null })
      })

      it('lets the next delivery claim at once after a release, keeping the payload binding', async () => {
        const claims = get('claims')
        const input = base()
        const first = await claims.claim(input)
        if (first.kind !== 'claimed') throw new Error('expected a claim')
        await claims.release({
          namespace: input.namespace,
          scope: input.scope,
          key: input.key,
          fence: first.fence,
        })
        expect(await claims.claim({ ...input, fingerprint: 'd'.repeat(64), now: 1_001 })).toEqual({
          kind: 'conflict',
        })
        expect(await claims.claim({ ...input, now: 1_001 })).toMatchObject({
          kind: 'claimed',
          takeover: true,
        })
      })

      it('keeps namespaces and scopes apart', async () => {
        const claims = get('claims')
        const input = base()
        expect((await claims.claim(input)).kind).toBe('claimed')
        expect((await claims.claim({ ...input, namespace: 'request' })).kind).toBe('claimed')
        expect((await claims.claim({ ...input, scope: unique('other') })).kind).toBe('claimed')
      })

      it('answers capacity when a scope holds its maximum of live records', async () => {
        const claims = get('claims')
        const scope = unique('busy')
        for (let index = 0; index < 3; index += 1) {
          expect((await claims.claim(base({ scope, maxPerScope: 3 }))).kind).toBe('claimed')
        }
        expect(await claims.claim(base({ scope, maxPerScope: 3 }))).toEqual({ kind: 'capacity' })
        // Other scopes are not affected.
        expect((await claims.claim(base({ scope: unique('calm'), maxPerScope: 3 }))).kind).toBe('claimed')
      })

      it('forgets records after their retention, measured from first acceptance', async () => {
        const claims = get('claims')
        const input = base({ retentionSeconds: 100 })
        const first = await claims.claim(input)
        if (first.kind !== 'claimed') throw new Error('expected a claim')
        await claims.complete(
          { namespace: input.namespace, scope: input.scope, key: input.key, fence: first.fence },
          1_050,
        )
        expect((await claims.claim({ ...input, now: 1_099 })).kind).toBe('completed')
        expect(await claims.sweep(1_100)).toBeGreaterThanOrEqual(stores?.expiresByPartition ? 0 : 1)
        expect((await claims.claim({ ...input, fingerprint: 'e'.repeat(64), now: 1_101 })).kind).toBe(
          'claimed',
        )
      })

      it('gives one claim to many concurrent deliveries of one event', async () => {
        const claims = get('claims')
        const peer = stores?.peer?.claims ?? claims
        const input = base()
        const results = await Promise.all(
          Array.from({ length: 40 }, (_, index) => (index % 2 === 0 ? claims : peer).claim({ ...input })),
        )
        expect(results.filter((result) => result.kind === 'claimed')).toHaveLength(1)
        expect(results.filter((result) => result.kind === 'processing')).toHaveLength(39)
      })
    })

    section('convergence', () => {
      const observation = (overrides: Partial<TaskObservation> = {}): TaskObservation => ({
        sender: unique('seller'),
        taskId: unique('task'),
        terminal: true,
        comparison: '1'.repeat(64),
        deliveryKey: unique('delivery'),
        now: 1_000,
        leaseSeconds: 30,
        retentionSeconds: 86_400,
        ...overrides,
      })

      it('lets the first terminal win; duplicates, stale and conflicting observations follow', async () => {
        const convergence = get('convergence')
        const first = observation()
        expect(await convergence.observe({ ...first, terminal: false, comparison: '0'.repeat(64) })).toBe(
          'proceed',
        )
        expect(await convergence.observe(first)).toBe('proceed')
        const reemission = { ...first, deliveryKey: unique('delivery'), now: 1_005 }
        expect(await convergence.observe(reemission)).toBe('in_progress')
        await convergence.settle(first.sender, first.taskId, first.deliveryKey, 1_006)
        expect(await convergence.observe({ ...reemission, now: 1_007 })).toBe('duplicate')
        expect(
          await convergence.observe({ ...first, terminal: false, comparison: '2'.repeat(64), now: 1_008 }),
        ).toBe('stale')
        expect(await convergence.observe({ ...first, comparison: '3'.repeat(64), now: 1_009 })).toBe(
          'conflict',
        )
      })

      it('keeps a settled terminal outcome for its retention from first observation, then forgets it', async () => {
        const convergence = get('convergence')
        // The receiver passes max(24 h, the sender's retry horizon): here a 48 h horizon.
        const first = observation({ retentionSeconds: 172_800 })
        expect(await convergence.observe(first)).toBe('proceed')
        await convergence.settle(first.sender, first.taskId, first.deliveryKey, 1_001)
        const reemission = { ...first, deliveryKey: unique('delivery') }
        expect(await convergence.observe({ ...reemission, now: 1_000 + 169_200 })).toBe('duplicate')
        expect(
          await convergence.observe({ ...first, comparison: '4'.repeat(64), now: 1_000 + 172_799 }),
        ).toBe('conflict')
        expect(await convergence.sweep(1_000 + 172_800)).toBeGreaterThanOrEqual(
          stores?.expiresByPartition ? 0 : 1,
        )
        expect(
          await convergence.observe({ ...first, comparison: '4'.repeat(64), now: 1_000 + 172_801 }),
        ).toBe('proceed')
      })

      it('lets the same delivery retry, and another take over after the lease or a release', async () => {
        const convergence = get('convergence')
        const first = observation()
        expect(await convergence.observe(first)).toBe('proceed')
        expect(await convergence.observe({ ...first, now: 1_010 })).toBe('proceed')
        const other = { ...first, deliveryKey: unique('delivery'), now: 1_020 }
        expect(await convergence.observe(other)).toBe('in_progress')
        expect(await convergence.observe({ ...other, now: 1_041 })).toBe('proceed')
        await convergence.release(first.sender, first.taskId, other.deliveryKey)
        expect(await convergence.observe({ ...first, now: 1_042 })).toBe('proceed')
      })
    })

    section('outbox', () => {
      const entry = outboxEntry

      it('leases due entries once, records attempts and lists webhook_activity newest first', async () => {
        const outbox = get('outbox')
        const destination = unique('registration')
        const first = entry(destination)
        await outbox.enqueue(first)
        await outbox.enqueue(entry(destination, { nextAttemptAt: 5_000 }))
        const leased = (await outbox.lease(1_000, 100, 60)).filter((item) => item.destination === destination)
        expect(leased.map((item) => item.id)).toEqual([first.id])
        expect(leased[0]).toMatchObject({ body: first.body, headers: first.headers, attempts: 0 })
        expect(
          (await outbox.lease(1_001, 100, 60)).filter((item) => item.destination === destination),
        ).toEqual([])

        const fence = leased[0]!.fence
        expect(
          await outbox.record(first.id, 'stale-fence', { kind: 'delivered', httpStatus: 200 }, 1_002),
        ).toBe(false)
        const retry = {
          kind: 'retry',
          nextAttemptAt: 1_010,
          httpStatus: 503,
          error: 'HTTP 503',
          activityStatus: 'failed',
        } as const
        expect(await outbox.record(first.id, fence, retry, 1_002)).toBe(true)
        const again = (await outbox.lease(1_010, 100, 60)).filter((item) => item.destination === destination)
        expect(again.map((item) => [item.id, item.attempts])).toEqual([[first.id, 1]])
        expect(
          await outbox.record(first.id, again[0]!.fence, { kind: 'delivered', httpStatus: 200 }, 1_011),
        ).toBe(true)

        expect(await outbox.activity(destination)).toEqual([
          {
            idempotency_key: first.idempotencyKey,
            status: 'success',
            http_status_code: 200,
            attempt: 2,
            error_message: null,
            at: 1_011,
          },
          {
            idempotency_key: first.idempotencyKey,
            status: 'failed',
            http_status_code: 503,
            attempt: 1,
            error_message: 'HTTP 503',
            at: 1_002,
          },
        ])
        expect((await outbox.pending(destination)).map((item) => item.nextAttemptAt)).toEqual([5_000])
      })

      it('re-leases an entry whose worker died, and stops a failed entry', async () => {
        const outbox = get('outbox')
        const destination = unique('registration')
        const item = entry(destination)
        await outbox.enqueue(item)
        const [leased] = (await outbox.lease(1_000, 10, 30)).filter(
          (candidate) => candidate.destination === destination,
        )
        const [again] = (await outbox.lease(1_031, 10, 30)).filter(
          (candidate) => candidate.destination === destination,
        )
        expect(again?.id).toBe(item.id)
        expect(again?.fence).not.toBe(leased?.fence)
        expect(
          await outbox.record(item.id, leased!.fence, { kind: 'delivered', httpStatus: 200 }, 1_032),
        ).toBe(false)
        const failed = {
          kind: 'failed',
          httpStatus: 409,
          error: 'conflict',
          activityStatus: 'failed',
        } as const
        expect(await outbox.record(item.id, again!.fence, failed, 1_032)).toBe(true)
        expect(await outbox.pending(destination)).toEqual([])
      })

      it('supersedes pending, unattempted entries of the same coalesce key', async () => {
        const outbox = get('outbox')
        const destination = unique('registration')
        const older = entry(destination, { coalesceKey: 'media_buy:mb_1', nextAttemptAt: 1_300 })
        const otherKey = entry(destination, { coalesceKey: 'media_buy:mb_2', nextAttemptAt: 1_300 })
        await outbox.enqueue(older)
        await outbox.enqueue(otherKey)
        const newer = entry(destination, {
          coalesceKey: 'media_buy:mb_1',
          nextAttemptAt: 1_300,
          body: '{"v":2}',
        })
        expect(await outbox.enqueue(newer)).toEqual({ superseded: [older.id] })
        expect((await outbox.pending(destination)).map((item) => item.id).sort()).toEqual(
          [otherKey.id, newer.id].sort(),
        )
      })

      /** The ids of the entries of these destinations, in the order given (other tests share the store). */
      const idsOf = (entries: readonly { id: string; destination: string }[], ...destinations: string[]) =>
        entries.filter((item) => destinations.includes(item.destination)).map((item) => item.id)
      const delivered = { kind: 'delivered', httpStatus: 200 } as const
      const retryAt = (nextAttemptAt: number) =>
        ({ kind: 'retry', nextAttemptAt, httpStatus: 503, activityStatus: 'failed' }) as const
      const leasedOne = (leased: readonly LeasedOutboxEntry[], id: string) => {
        const found = leased.find((item) => item.id === id)
        if (!found) throw new Error(`entry ${id} was not leased`)
        return found
      }

      it('keeps media buy ids (without duplicates, in order) and the barrier flag; none and false by default', async () => {
        const outbox = get('outbox')
        const destination = unique('registration')
        const [first, second] = [unique('mb'), unique('mb')]
        const plain = entry(destination, { nextAttemptAt: 3_000 })
        const tagged = entry(destination, { mediaBuyIds: [second, first, second], nextAttemptAt: 3_000 })
        await outbox.enqueue(plain)
        await outbox.enqueue(tagged)
        expect(
          (await outbox.pending(destination)).map((item) => [item.id, item.mediaBuyIds, item.barrier]),
        ).toEqual([
          [plain.id, [], false],
          [tagged.id, [second, first], false],
        ])
        const leased = await outbox.lease(3_000, 100, 60)
        expect(leasedOne(leased, tagged.id)).toMatchObject({ mediaBuyIds: [second, first], barrier: false })
      })

      it('holds a barrier back while an earlier entry of its media buy to its URL is pending, leased or retrying, in any destination', async () => {
        const outbox = get('outbox')
        const [events, reports] = [unique('registration'), unique('registration')]
        const [buy, other] = [unique('mb'), unique('mb')]
        const impairment = entry(events, { mediaBuyIds: [buy], createdAt: 4_000, nextAttemptAt: 4_000 })
        const unrelated = entry(reports, { mediaBuyIds: [other], createdAt: 4_000, nextAttemptAt: 4_000 })
        const final = entry(reports, {
          mediaBuyIds: [buy],
          barrier: true,
          createdAt: 4_000,
          nextAttemptAt: 4_000,
        })
        await outbox.enqueue(impairment)
        await outbox.enqueue(unrelated)
        expect(await outbox.enqueue(final)).toEqual({ superseded: [] })

        // Due together: the barrier is left out, entries of other buys are not held back.
        const first = await outbox.lease(4_000, 100, 60)
        expect(idsOf(first, events, reports)).toEqual([impairment.id, unrelated.id])
        // Leased by a worker: still waits.
        expect(idsOf(await outbox.lease(4_001, 100, 60), events, reports)).toEqual([])
        // Scheduled for a retry (and the unrelated one retrying much later): still waits.
        expect(
          await outbox.record(impairment.id, leasedOne(first, impairment.id).fence, retryAt(4_010), 4_002),
        ).toBe(true)
        expect(
          await outbox.record(unrelated.id, leasedOne(first, unrelated.id).fence, retryAt(80_000), 4_002),
        ).toBe(true)
        expect(idsOf(await outbox.lease(4_005, 100, 60), events, reports)).toEqual([])
        const again = await outbox.lease(4_010, 100, 60)
        expect(idsOf(again, events, reports)).toEqual([impairment.id])
        // Delivered: the barrier goes, although an entry of another buy is still pending.
        expect(
          await outbox.record(impairment.id, leasedOne(again, impairment.id).fence, delivered, 4_011),
        ).toBe(true)
        const last = await outbox.lease(4_011, 100, 60)
        expect(idsOf(last, events, reports)).toEqual([final.id])
        expect(leasedOne(last, final.id)).toMatchObject({ barrier: true, mediaBuyIds: [buy] })
      })

      it('never holds a barrier back for an entry of its buy to another URL, in the same destination too', async () => {
        const outbox = get('outbox')
        const destination = unique('registration')
        const buy = unique('mb')
        const push = entry(destination, {
          url: 'https://buyer.example/push',
          mediaBuyIds: [buy],
          createdAt: 4_500,
          nextAttemptAt: 4_500,
        })
        const report = entry(destination, {
          url: 'https://buyer.example/reports',
          mediaBuyIds: [buy],
          createdAt: 4_500,
          nextAttemptAt: 4_500,
        })
        const final = entry(destination, {
          url: 'https://buyer.example/reports',
          mediaBuyIds: [buy],
          barrier: true,
          createdAt: 4_500,
          nextAttemptAt: 4_500,
        })
        for (const item of [push, report, final]) await outbox.enqueue(item)
        // The earlier report to its own URL holds it back; the push does not.
        const first = await outbox.lease(4_500, 100, 60)
        expect(idsOf(first, destination)).toEqual([push.id, report.id])
        expect(await outbox.record(push.id, leasedOne(first, push.id).fence, retryAt(9_000), 4_501)).toBe(
          true,
        )
        expect(await outbox.record(report.id, leasedOne(first, report.id).fence, delivered, 4_501)).toBe(true)
        // The push URL answers errors and waits for its retry: the final report goes all the same.
        const next = await outbox.lease(4_502, 100, 60)
        expect(idsOf(next, destination)).toEqual([final.id])
        expect(await outbox.record(final.id, leasedOne(next, final.id).fence, delivered, 4_503)).toBe(true)
        expect((await outbox.pending(destination)).map((item) => item.id)).toEqual([push.id])
      })

      it('lets a barrier go at once without earlier entries, and once the earlier one failed', async () => {
        const outbox = get('outbox')
        const destination = unique('registration')
        const [single, shared, second] = [unique('mb'), unique('mb'), unique('mb')]
        const lonely = entry(destination, {
          mediaBuyIds: [single],
          barrier: true,
          createdAt: 5_000,
          nextAttemptAt: 5_000,
        })
        await outbox.enqueue(lonely)
        const alone = await outbox.lease(5_000, 100, 60)
        expect(idsOf(alone, destination)).toEqual([lonely.id])
        expect(await outbox.record(lonely.id, leasedOne(alone, lonely.id).fence, delivered, 5_001)).toBe(true)

        // A barrier of two buys waits for an earlier entry of either.
        const earlier = entry(destination, { mediaBuyIds: [second], createdAt: 5_100, nextAttemptAt: 5_100 })
        const final = entry(destination, {
          mediaBuyIds: [shared, second],
          barrier: true,
          createdAt: 5_100,
          nextAttemptAt: 5_100,
        })
        await outbox.enqueue(earlier)
        await outbox.enqueue(final)
        const leased = await outbox.lease(5_100, 100, 60)
        expect(idsOf(leased, destination)).toEqual([earlier.id])
        const failed = { kind: 'failed', httpStatus: 410, activityStatus: 'failed' } as const
        expect(await outbox.record(earlier.id, leasedOne(leased, earlier.id).fence, failed, 5_101)).toBe(true)
        expect(idsOf(await outbox.lease(5_101, 100, 60), destination)).toEqual([final.id])
      })

      it('closes the buys of a barrier and those closeMediaBuys names: later entries of them are refused', async () => {
        const outbox = get('outbox')
        const destination = unique('registration')
        const [finalBuy, silentBuy, openBuy] = [unique('mb'), unique('mb'), unique('mb')]
        expect(await outbox.closedMediaBuys([finalBuy, silentBuy])).toEqual([])
        const final = entry(destination, { mediaBuyIds: [finalBuy], barrier: true, nextAttemptAt: 6_000 })
        await outbox.enqueue(final)
        expect(await outbox.closedMediaBuys([silentBuy, finalBuy, finalBuy])).toEqual([finalBuy])

        const late = entry(destination, {
          mediaBuyIds: [openBuy, finalBuy],
          coalesceKey: 'k',
          nextAttemptAt: 6_000,
        })
        expect(await outbox.enqueue(late)).toEqual({ superseded: [], closed: [finalBuy] })
        const secondFinal = entry(destination, {
          mediaBuyIds: [finalBuy],
          barrier: true,
          nextAttemptAt: 6_000,
        })
        expect(await outbox.enqueue(secondFinal)).toEqual({ superseded: [], closed: [finalBuy] })
        expect((await outbox.pending(destination)).map((item) => item.id)).toEqual([final.id])

        expect(await outbox.closeMediaBuys([silentBuy, finalBuy, silentBuy], 6_001)).toEqual([silentBuy])
        expect(await outbox.closeMediaBuys([silentBuy], 6_002)).toEqual([])
        expect(await outbox.enqueue(entry(destination, { mediaBuyIds: [silentBuy] }))).toEqual({
          superseded: [],
          closed: [silentBuy],
        })
        expect(await outbox.enqueue(entry(destination, { mediaBuyIds: [openBuy] }))).toEqual({
          superseded: [],
        })
        expect(await outbox.closedMediaBuys([openBuy, silentBuy, finalBuy])).toEqual([silentBuy, finalBuy])

        // Still closed once the final report was delivered.
        const leased = await outbox.lease(6_000, 100, 60)
        expect(await outbox.record(final.id, leasedOne(leased, final.id).fence, delivered, 6_003)).toBe(true)
        expect(await outbox.closedMediaBuys([finalBuy])).toEqual([finalBuy])
      })

      it('orders every accepted event of a buy before its barrier under concurrent writers', async () => {
        const outbox = get('outbox')
        const peer = stores?.peer?.outbox ?? outbox
        const destination = unique('registration')
        const buy = unique('mb')
        const writes = Array.from({ length: 24 }, (_, index) => {
          const item =
            index === 12
              ? entry(destination, { mediaBuyIds: [buy], barrier: true, nextAttemptAt: 7_000 })
              : entry(destination, { mediaBuyIds: [buy], nextAttemptAt: 7_000 })
          return (index % 2 === 0 ? outbox : peer).enqueue(item).then((result) => ({ item, result }))
        })
        const results = await Promise.all(writes)
        const accepted = results
          .filter(({ result }) => result.closed === undefined)
          .map(({ item }) => item.id)
        const refused = results.filter(({ result }) => result.closed !== undefined)
        for (const { result } of refused) expect(result).toEqual({ superseded: [], closed: [buy] })
        const order = (await outbox.pending(destination)).map((item) => item.id)
        expect(order.slice().sort()).toEqual(accepted.slice().sort())
        const barrier = results[12]!.item.id
        // Nothing was accepted after the barrier.
        expect(order.at(-1)).toBe(barrier)
      })
    })

    section('replay', () => {
      it('remembers a nonce until it expires, per keyid', async () => {
        const replay = get('replay')
        const keyid = unique('kid')
        expect(await replay.seen(keyid, 'n1', 1_000)).toBe(false)
        expect(await replay.remember(keyid, 'n1', 1_360, 100, 1_000)).toBe('stored')
        expect(await replay.seen(keyid, 'n1', 1_359)).toBe(true)
        expect(await replay.remember(keyid, 'n1', 1_400, 100, 1_001)).toBe('replayed')
        expect(await replay.seen(unique('kid'), 'n1', 1_001)).toBe(false)
        expect(await replay.seen(keyid, 'n1', 1_361)).toBe(false)
        expect(await replay.remember(keyid, 'n1', 1_800, 100, 1_361)).toBe('stored')
      })

      it('answers capacity at the per-keyid cap, counting live entries only', async () => {
        const replay = get('replay')
        const keyid = unique('kid')
        for (let index = 0; index < 3; index += 1) {
          expect(await replay.remember(keyid, `n${index}`, 1_100 + index, 3, 1_000)).toBe('stored')
        }
        expect(await replay.atCapacity(keyid, 3, 1_000)).toBe(true)
        expect(await replay.remember(keyid, 'n9', 1_200, 3, 1_000)).toBe('capacity')
        expect(await replay.atCapacity(unique('kid'), 3, 1_000)).toBe(false)
        expect(await replay.atCapacity(keyid, 3, 1_100)).toBe(false)
        expect(await replay.remember(keyid, 'n9', 1_200, 3, 1_100)).toBe('stored')
      })

      // The per-keyid cap is a rate: `nonceCapForRate(rate)` = rate × 420 s, the longest a nonce of an accepted
      // signature lives (created up to 60 s ahead, expires 300 s later, kept 60 s more). The default is 5,000 a
      // second (2,100,000 rows); the store's arithmetic is linear in the rate, so these run at RATE = 5 a
      // second (a cap of 2,100 rows), 1/1,000 of the default, to keep the database round trips few.
      const RATE = 5
      const CAP = nonceCapForRate(RATE)
      const START = 1_000_000

      /** Remembers `rate` nonces a second for `seconds`, each living the longest an accepted one can. */
      async function drive(keyid: string, rate: number, seconds: number) {
        const replay = get('replay')
        const outcomes = {
          stored: 0,
          replayed: 0,
          capacity: 0,
          atCapacity: 0,
          firstRefusal: -1,
          maxStored: 0,
          maxLive: 0,
        }
        for (let second = 0; second < seconds; second += 1) {
          const now = START + second
          for (let index = 0; index < rate; index += 1) {
            if (await replay.atCapacity(keyid, CAP, now)) outcomes.atCapacity += 1
            const outcome = await replay.remember(
              keyid,
              `n-${second}-${index}`,
              now + NONCE_HORIZON_SECONDS,
              CAP,
              now,
            )
            if (outcome === 'capacity' && outcomes.firstRefusal < 0) outcomes.firstRefusal = second
            outcomes[outcome] += 1
          }
          if (stores?.replayRows && second % 15 === 14) {
            const rows = await stores.replayRows(keyid, now)
            outcomes.maxStored = Math.max(outcomes.maxStored, rows.stored)
            outcomes.maxLive = Math.max(outcomes.maxLive, rows.live)
          }
        }
        return outcomes
      }

      it('sustains a keyid at its rate for longer than a nonce lives, within rate × 420 rows', async () => {
        expect(CAP).toBe(2_100)
        const keyid = unique('kid')
        const seconds = NONCE_HORIZON_SECONDS + 105
        const outcomes = await drive(keyid, RATE, seconds)
        expect(outcomes).toMatchObject({ stored: RATE * seconds, replayed: 0, capacity: 0, atCapacity: 0 })
        if (stores?.replayRows) {
          // Steady state reached: a full horizon of nonces is held, and never more than the cap.
          expect(outcomes.maxLive).toBeGreaterThanOrEqual(CAP - RATE)
          expect(outcomes.maxLive).toBeLessThanOrEqual(CAP)
          expect(outcomes.maxStored).toBeLessThanOrEqual(CAP)
        }
      })

      it('refuses a keyid above its rate once it holds rate × 420 nonces, never holding more', async () => {
        const keyid = unique('kid')
        // Twice the rate: the cap is reached after 2,100 / 10 = 210 s, long before the first nonce expires.
        const outcomes = await drive(keyid, RATE * 2, 300)
        expect(outcomes.stored).toBe(CAP)
        expect(outcomes.replayed).toBe(0)
        expect(outcomes.capacity).toBe(RATE * 2 * 300 - CAP)
        expect(outcomes.firstRefusal).toBe(CAP / (RATE * 2))
        expect(await get('replay').atCapacity(keyid, CAP, START + 300)).toBe(true)
        if (stores?.replayRows) {
          expect(await stores.replayRows(keyid, START + 300)).toEqual({ stored: CAP, live: CAP })
        }
      })

      it('stores one of many concurrent remembers of one nonce', async () => {
        const replay = get('replay')
        const peer = stores?.peer?.replay ?? replay
        const keyid = unique('kid')
        const results = await Promise.all(
          Array.from({ length: 30 }, (_, index) =>
            (index % 2 ? replay : peer).remember(keyid, 'same', 2_000, 1_000, 1_000),
          ),
        )
        expect(results.filter((result) => result === 'stored')).toHaveLength(1)
        expect(results.filter((result) => result === 'replayed')).toHaveLength(29)
      })
    })

    if (provides.includes('inbox'))
      describeInboxContract(() => ({
        claims: get('claims'),
        replay: get('replay'),
        transactional: name !== 'memory',
        openInbox: (fail) => {
          if (!stores?.openInbox) throw new Error(`${name} did not open its inbox`)
          return stores.openInbox(fail)
        },
      }))
  })
}
