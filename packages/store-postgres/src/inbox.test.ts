/**
 * The PostgreSQL inbox decides a delivery (and a group) in one call to `inbox_accept` (`inbox_accept_group`),
 * migration 3. These tests cover what the function decides beyond the store contract's inbox section: a
 * takeover after an expired lease, a claim in flight, capacity on nonces and on claims, each convergence
 * outcome with what it does to the claim, re-emission within one group, and failures (the writer's, the
 * store's) rolling back only their own delivery. The differential test runs seeded random groups through the
 * inbox and, on a second schema, through `acceptInTransaction` over the PostgreSQL stores (what the function
 * replaces), and compares every outcome and, at the end, every row of the dedup tables.
 */
import { inboxDelivery } from '@adwire/store-contract'
import { dropSchema, freshSchemaName, resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import {
  acceptInTransaction,
  WebhookError,
  type InboxDelivery,
  type InboxOutcome,
  type TaskObservation,
} from '@adwire/webhooks'
import type { PoolClient } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { StoreError } from './errors.js'
import { openPostgresStores, type PostgresStores } from './open.js'

const url = await resolveTestPostgresUrl()

let counter = 0
const unique = (prefix: string) => `${prefix}-${(counter += 1)}-${Math.random().toString(36).slice(2, 8)}`

const delivery = inboxDelivery

const at = (base: InboxDelivery, now: number): InboxDelivery => ({
  ...base,
  nonce: { ...base.nonce!, nonce: unique('nonce') },
  claim: { ...base.claim, now },
})

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  )

if (!url) {
  describe.skip('PostgreSQL inbox (ADWIRE_TEST_POSTGRES_URL unset or unreachable)', () => {
    it('needs a PostgreSQL server', () => {})
  })
} else {
  describe('PostgreSQL inbox: what inbox_accept decides', () => {
    const schema = freshSchemaName()
    const events = `"${schema}".inbox_events`
    let stores: PostgresStores
    /** Keys whose writer throws. */
    const failing = new Set<string>()

    beforeAll(async () => {
      stores = await openPostgresStores({ connectionString: url, schema, maxConnections: 4 })
      await stores.pool.query(`CREATE TABLE ${events} (scope text NOT NULL, key text NOT NULL)`)
    })
    afterAll(async () => {
      await stores.close()
      await dropSchema(url, schema)
    })

    const inbox = () =>
      stores.createInbox({
        async write(event, client) {
          await client.query(`INSERT INTO ${events} (scope, key) VALUES ($1, $2)`, [
            event.sender,
            event.idempotencyKey,
          ])
          if (failing.has(event.idempotencyKey)) throw new Error('the writer failed')
        },
      })
    const published = async (scope: string) =>
      (
        await stores.pool.query<{ key: string }>(`SELECT key FROM ${events} WHERE scope = $1 ORDER BY key`, [
          scope,
        ])
      ).rows.map((row) => row.key)

    it('takes over a claim whose lease expired, and completes it', async () => {
      const scope = unique('sender')
      const base = delivery(scope, unique('key'))
      const held = await stores.claims.claim(base.claim)
      expect(held).toMatchObject({ kind: 'claimed', takeover: false })
      // Still within the lease: in flight, and only the nonce is kept.
      const early = at(base, 1_029)
      expect(await inbox().accept(early)).toEqual({
        kind: 'claim',
        claim: { kind: 'processing', leaseExpiresAt: 1_030 },
      })
      expect(await stores.replay.seen(early.nonce!.keyid, early.nonce!.nonce, 1_029)).toBe(true)
      // After it: this delivery takes the claim over, publishes and completes it.
      expect(await inbox().accept(at(base, 1_030))).toMatchObject({
        kind: 'published',
        event: { takeover: true, reemission: false },
      })
      expect(await stores.claims.claim({ ...base.claim, now: 1_031 })).toEqual({
        kind: 'completed',
        result: null,
      })
      expect(await published(scope)).toEqual([base.claim.key])
    })

    it('refuses a keyid at its nonce cap before any claim', async () => {
      const scope = unique('sender')
      const first = delivery(scope, unique('key'))
      const capped = (d: InboxDelivery): InboxDelivery => ({ ...d, nonce: { ...d.nonce!, cap: 1 } })
      expect(await inbox().accept(capped(first))).toMatchObject({ kind: 'published' })
      const second = capped(delivery(scope, unique('key')))
      expect(await inbox().accept(second)).toEqual({ kind: 'replay_capacity' })
      // Nothing of it was written: neither its nonce nor a claim (a claim of its key is the first).
      expect(await stores.replay.seen(second.nonce!.keyid, second.nonce!.nonce, 1_000)).toBe(false)
      expect(await stores.claims.claim(second.claim)).toMatchObject({ kind: 'claimed', takeover: false })
      expect(await published(scope)).toEqual([first.claim.key])
    })

    it('refuses a scope at its claim cap, keeping the nonce', async () => {
      const scope = unique('sender')
      const capped = (d: InboxDelivery): InboxDelivery => ({ ...d, claim: { ...d.claim, maxPerScope: 1 } })
      const first = capped(delivery(scope, unique('key')))
      expect(await inbox().accept(first)).toMatchObject({ kind: 'published' })
      const second = capped(delivery(scope, unique('key')))
      expect(await inbox().accept(second)).toEqual({ kind: 'claim', claim: { kind: 'capacity' } })
      expect(await stores.replay.seen(second.nonce!.keyid, second.nonce!.nonce, 1_000)).toBe(true)
      // Once the first record expired, the scope has room again.
      expect(
        await inbox().accept(
          capped(at(delivery(scope, second.claim.key), 1_000 + first.claim.retentionSeconds)),
        ),
      ).toMatchObject({ kind: 'published' })
      expect(await published(scope)).toEqual([first.claim.key, second.claim.key].sort())
    })

    it('rejects invalid caps as the stores do, before any statement', async () => {
      const scope = unique('sender')
      const badNonce = delivery(scope, unique('key'))
      const error = await rejection(inbox().accept({ ...badNonce, nonce: { ...badNonce.nonce!, cap: -1 } }))
      expect(StoreError.is(error) && error.code).toBe('store_invalid_options')
      const badClaim = delivery(scope, unique('key'))
      const other = await rejection(
        inbox().accept({ ...badClaim, claim: { ...badClaim.claim, maxPerScope: 1.5 } }),
      )
      expect(StoreError.is(other) && other.code).toBe('store_invalid_options')
      expect(await stores.replay.seen(badNonce.nonce!.keyid, badNonce.nonce!.nonce, 1_000)).toBe(false)
      expect(await published(scope)).toEqual([])
    })

    it('decides each convergence outcome and gives the claim back or completes it', async () => {
      const scope = unique('sender')
      const taskId = unique('task')
      const observed = (key: string, terminal: boolean, comparison: string, now = 1_000): InboxDelivery => {
        const observation: TaskObservation = {
          sender: scope,
          taskId,
          terminal,
          comparison: comparison.repeat(64),
          deliveryKey: key,
          now,
          leaseSeconds: 30,
          retentionSeconds: 86_400,
        }
        return at(delivery(scope, key, { observation }), now)
      }
      // Another delivery owns the terminal outcome 'a' (through the store, not yet published).
      const owner = unique('key')
      expect(await stores.convergence.observe(observed(owner, true, 'a').observation!)).toBe('proceed')

      const busy = observed(unique('key'), true, 'a')
      expect(await inbox().accept(busy)).toEqual({ kind: 'convergence', result: 'in_progress' })
      // Given back: the next delivery of the key takes the claim over at once.
      expect(await stores.claims.claim(busy.claim)).toMatchObject({ kind: 'claimed', takeover: true })

      const conflicting = observed(unique('key'), true, 'b')
      expect(await inbox().accept(conflicting)).toEqual({ kind: 'convergence', result: 'conflict' })
      expect(await stores.claims.claim(conflicting.claim)).toMatchObject({ kind: 'claimed', takeover: true })

      // After the owner's lease, a delivery of the same outcome takes it over and publishes it (settled).
      const winner = observed(unique('key'), true, 'a', 1_030)
      expect(await inbox().accept(winner)).toMatchObject({ kind: 'published' })
      expect(await stores.convergence.observe(observed(owner, true, 'a', 1_031).observation!)).toBe(
        'duplicate',
      )

      const repeat = observed(unique('key'), true, 'a', 1_031)
      expect(await inbox().accept(repeat)).toEqual({ kind: 'convergence', result: 'duplicate' })
      // Acknowledged: the claim is completed.
      expect(await stores.claims.claim({ ...repeat.claim, now: 1_032 })).toEqual({
        kind: 'completed',
        result: null,
      })
      const late = observed(unique('key'), false, 'c', 1_031)
      expect(await inbox().accept(late)).toEqual({ kind: 'convergence', result: 'stale' })
      expect(await stores.claims.claim({ ...late.claim, now: 1_032 })).toEqual({
        kind: 'completed',
        result: null,
      })
      // A non-terminal observation before any terminal of its task publishes.
      const early = observed(unique('key'), false, 'c')
      const otherTask = { ...early, observation: { ...early.observation!, taskId: unique('task') } }
      expect(await inbox().accept(otherTask)).toMatchObject({ kind: 'published' })
      expect(await published(scope)).toEqual([winner.claim.key, otherTask.claim.key].sort())
    })

    it('marks the second key of one notification a re-emission, within one group too', async () => {
      const scope = unique('sender')
      const notificationId = unique('notification')
      const first = delivery(scope, unique('key'), { notificationId })
      const second = delivery(scope, unique('key'), { notificationId })
      const shared = inbox()
      const outcomes = await Promise.all([shared.accept(first), shared.accept(second)])
      expect(outcomes).toMatchObject([
        { kind: 'published', event: { idempotencyKey: first.claim.key, reemission: false } },
        { kind: 'published', event: { idempotencyKey: second.claim.key, reemission: true } },
      ])
      // The notification is bound to the first key, and completed.
      const record = {
        namespace: 'webhook' as const,
        scope: `${scope}#notification`,
        key: notificationId,
        now: 1_001,
        leaseSeconds: 0,
        retentionSeconds: 86_400,
      }
      expect(await stores.claims.claim({ ...record, fingerprint: first.claim.key })).toEqual({
        kind: 'completed',
        result: null,
      })
      expect(await stores.claims.claim({ ...record, fingerprint: second.claim.key })).toEqual({
        kind: 'conflict',
      })
      // An empty notification_id names no notification (as acceptInTransaction).
      expect(await inbox().accept(delivery(scope, unique('key'), { notificationId: '' }))).toMatchObject({
        kind: 'published',
        event: { reemission: false },
      })
    })

    it("rolls back only the failing delivery of a group: the writer's failure and the store's", async () => {
      const scope = unique('sender')
      const keys = Array.from({ length: 6 }, () => unique('key'))
      failing.add(keys[1]!)
      // A NUL character cannot be stored in text: the decision of this delivery fails in PostgreSQL.
      const broken = delivery(scope, `${unique('key')}\u0000`)
      const shared = inbox()
      const deliveries = keys.map((key) => delivery(scope, key))
      const outcomes = await Promise.allSettled([
        ...deliveries.map((d) => shared.accept(d)),
        shared.accept(broken),
      ])
      const reasons = outcomes.map((outcome) => (outcome.status === 'rejected' ? outcome.reason : undefined))
      expect(WebhookError.is(reasons[1]) && reasons[1].code).toBe('webhook_publish_failed')
      expect(StoreError.is(reasons[6]) && reasons[6].code).toBe('store_query_failed')
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(5)
      // Each other delivery was published once (the first attempt's writes were rolled back).
      expect(await published(scope)).toEqual(keys.filter((key) => key !== keys[1]).sort())
      // Nothing of the failed delivery was kept: its nonce is unseen and its key claims afresh.
      const failed = deliveries[1]!
      expect(await stores.replay.seen(failed.nonce!.keyid, failed.nonce!.nonce, 1_000)).toBe(false)
      failing.delete(keys[1]!)
      expect(await shared.accept(delivery(scope, keys[1]!))).toMatchObject({
        kind: 'published',
        event: { takeover: false },
      })
    })
    it("writes a group's published events in one writeGroup call; a failing one falls back to write per delivery", async () => {
      const scope = unique('sender')
      const calls: number[] = []
      const grouped = stores.createInbox({
        async write(event, client) {
          calls.push(1)
          await client.query(`INSERT INTO ${events} (scope, key) VALUES ($1, $2)`, [
            event.sender,
            event.idempotencyKey,
          ])
          if (failing.has(event.idempotencyKey)) throw new Error('the writer failed')
        },
        async writeGroup(batch, client) {
          calls.push(batch.length)
          await client.query(`INSERT INTO ${events} (scope, key) SELECT $1, unnest($2::text[])`, [
            scope,
            batch.map((event) => event.idempotencyKey),
          ])
          if (batch.some((event) => failing.has(event.idempotencyKey)))
            throw new Error('the group writer failed')
        },
      })
      const keys = Array.from({ length: 5 }, () => unique('key'))
      const first = delivery(scope, keys[0]!)
      // Five new keys and a copy of the first, arriving together: one group, five published, the copy a duplicate.
      const outcomes = await Promise.all([
        ...keys.map((key) => grouped.accept(delivery(scope, key))),
        grouped.accept(at(first, 1_001)),
      ])
      expect(outcomes.map((outcome) => outcome.kind)).toEqual([
        'published',
        'published',
        'published',
        'published',
        'published',
        'claim',
      ])
      expect(calls).toEqual([5])
      expect(await published(scope)).toEqual([...keys].sort())
      // A group whose writer fails: run again one delivery at a time with `write`; only the failing one fails.
      calls.length = 0
      const more = Array.from({ length: 3 }, () => unique('key'))
      failing.add(more[2]!)
      const settled = await Promise.allSettled(more.map((key) => grouped.accept(delivery(scope, key))))
      failing.delete(more[2]!)
      expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected'])
      expect(calls).toEqual([3, 1, 1, 1])
      expect(await published(scope)).toEqual([...keys, more[0]!, more[1]!].sort())
    })

    it('commits up to `concurrency` groups at once, each on its own connection; 1 runs one at a time', async () => {
      for (const concurrency of [2, 1]) {
        const scope = unique('sender')
        const slow = delivery(scope, unique('slow'))
        const fast = delivery(scope, unique('fast'))
        let release!: () => void
        const gate = new Promise<void>((resolve) => (release = resolve))
        let writing!: () => void
        const slowWriting = new Promise<void>((resolve) => (writing = resolve))
        const gated = stores.createInbox({
          concurrency,
          async write(event, client) {
            await client.query(`INSERT INTO ${events} (scope, key) VALUES ($1, $2)`, [
              event.sender,
              event.idempotencyKey,
            ])
            if (event.idempotencyKey === slow.claim.key) {
              writing()
              await gate
            }
          },
        })
        const slowOutcome = gated.accept(slow)
        await slowWriting
        let fastSettled = false
        const fastOutcome = gated.accept(fast).finally(() => (fastSettled = true))
        if (concurrency === 2) {
          // The second group commits while the first is still open.
          expect(await fastOutcome).toMatchObject({ kind: 'published' })
          expect(await published(scope)).toEqual([fast.claim.key])
        } else {
          // The second group waits for the first: nothing of it is decided while the first is open.
          await new Promise((resolve) => setTimeout(resolve, 200))
          expect(fastSettled).toBe(false)
          expect(await published(scope)).toEqual([])
        }
        release()
        expect(await slowOutcome).toMatchObject({ kind: 'published' })
        expect(await fastOutcome).toMatchObject({ kind: 'published' })
        expect(await published(scope)).toEqual([fast.claim.key, slow.claim.key].sort())
      }
    })

    it('gathers a burst into one group: what arrives while a group is gathered joins it, no second transaction', async () => {
      const scope = unique('sender')
      const burst = Array.from({ length: 20 }, () => delivery(scope, unique('burst')))
      const one = inbox()
      let acquired = 0
      const count = () => {
        acquired += 1
      }
      stores.pool.on('acquire', count)
      try {
        const outcomes = await Promise.all(burst.map((each) => one.accept(each)))
        expect(outcomes.every((outcome) => outcome.kind === 'published')).toBe(true)
      } finally {
        stores.pool.off('acquire', count)
      }
      expect(acquired).toBe(1)
      expect(await published(scope)).toEqual(burst.map((each) => each.claim.key).sort())
    })

    it('refuses a concurrency that is not a whole number ≥ 1', () => {
      for (const concurrency of [0, -1, 1.5, Number.NaN])
        expect(() => stores.createInbox({ concurrency, write: async () => {} })).toThrow(
          expect.objectContaining({ code: 'store_invalid_options' }),
        )
    })
  })

  describe('PostgreSQL inbox: two instances on one schema', () => {
    it('publishes each key once across two pools sharing four sellers, without a deadlock', async () => {
      const schema = freshSchemaName()
      const first = await openPostgresStores({ connectionString: url, schema, maxConnections: 2 })
      const second = await openPostgresStores({ connectionString: url, schema, maxConnections: 2 })
      try {
        const table = `"${schema}".two_instances`
        await first.pool.query(`CREATE TABLE ${table} (scope text NOT NULL, key text NOT NULL)`)
        const write = async (event: { sender: string; idempotencyKey: string }, client: PoolClient) => {
          await client.query(`INSERT INTO ${table} (scope, key) VALUES ($1, $2)`, [
            event.sender,
            event.idempotencyKey,
          ])
        }
        const inboxes = [first.createInbox({ write }), second.createInbox({ write })]
        const sellers = ['seller-d', 'seller-a', 'seller-c', 'seller-b']
        // Three rounds of fresh keys (without the lock order they deadlock now and then).
        for (let round = 0; round < 3; round += 1) {
          const keys = Array.from({ length: 60 }, (_, index) => ({
            scope: sellers[index % sellers.length]!,
            key: `key-${round}-${index}`,
          }))
          // Every key three times at once, its copies in both instances, each instance meeting the sellers in
          // the other order (so that groups taking locks in arrival order would deadlock).
          const copies = [0, 1, 2].flatMap((copy) => keys.map((entry, index) => ({ ...entry, index, copy })))
          const forInstance = (instance: number) =>
            copies.filter(({ index, copy }) => (index + copy) % 2 === instance)
          const accept = (instance: number) => (entry: (typeof copies)[number]) =>
            inboxes[instance]!.accept(
              delivery(entry.scope, entry.key, {
                observation: {
                  sender: entry.scope,
                  taskId: `task-${entry.index % 7}`,
                  terminal: false,
                  comparison: '',
                  deliveryKey: entry.key,
                  now: 1_000,
                  leaseSeconds: 30,
                  retentionSeconds: 86_400,
                },
                notificationId: `notification-${round}-${entry.index}`,
              }),
            )
          const outcomes = (
            await Promise.all([
              Promise.all(forInstance(0).map(accept(0))),
              Promise.all(forInstance(1).reverse().map(accept(1))),
            ])
          ).flat()
          expect(outcomes.filter((outcome) => outcome.kind === 'published')).toHaveLength(keys.length)
          // The other copies found the key completed (a group's claims are invisible until it commits).
          expect(outcomes.filter((outcome) => outcome.kind !== 'published')).toEqual(
            Array.from({ length: keys.length * 2 }, () => ({
              kind: 'claim',
              claim: { kind: 'completed', result: null },
            })),
          )
          const { rows } = await first.pool.query<{ scope: string; key: string }>(
            `SELECT scope, key FROM ${table} WHERE key LIKE $1 ORDER BY key`,
            [`key-${round}-%`],
          )
          expect(rows).toHaveLength(keys.length)
          expect(new Set(rows.map((row) => row.key)).size).toBe(keys.length)
        }
      } finally {
        await first.close()
        await second.close()
        await dropSchema(url, schema)
      }
    })
  })

  describe('PostgreSQL inbox against acceptInTransaction over the PostgreSQL stores', () => {
    it.each([1, 2, 3, 4])('decides alike over 80 random groups (seed %i)', async (seed) => {
      const schemas = [freshSchemaName(), freshSchemaName()] as const
      const inboxStores = await openPostgresStores({
        connectionString: url,
        schema: schemas[0],
        maxConnections: 2,
      })
      const reference = await openPostgresStores({
        connectionString: url,
        schema: schemas[1],
        maxConnections: 2,
      })
      try {
        const inbox = inboxStores.createInbox({ write: async () => {} })
        const referenceTransaction = {
          claims: reference.claims,
          convergence: reference.convergence,
          replay: reference.replay,
          write: () => {},
        }
        const random = generator(seed)
        const { pick } = random
        let now = 1_000
        for (let round = 0; round < 80; round += 1) {
          now += pick([0, 0, 1, 2, 5, 13, 40])
          if (pick([true, false, false])) {
            // Another party holds a claim, or owns a terminal outcome, through the stores (both sides).
            const claim = {
              namespace: 'webhook' as const,
              scope: pick(['s1', 's2']),
              key: pick(['k1', 'k2', 'k3', 'k4']),
              fingerprint: pick(['a', 'b']).repeat(64),
              now,
              leaseSeconds: pick([5, 20]),
              retentionSeconds: pick([40, 200]),
            }
            const observation = taskObservation(random, claim.scope, pick(['other-1', 'other-2']), now)
            expect(withoutFence(await inboxStores.claims.claim(claim))).toEqual(
              withoutFence(await reference.claims.claim(claim)),
            )
            expect(await inboxStores.convergence.observe(observation)).toEqual(
              await reference.convergence.observe(observation),
            )
            continue
          }
          const group = Array.from({ length: pick([1, 1, 2, 3, 5, 8]) }, () =>
            randomDelivery(random, now),
          ).sort(lockOrder)
          // All accepted in one turn: one group, decided by inbox_accept_group in this (its lock) order.
          const actual = await Promise.all(group.map((d) => inbox.accept(d)))
          const expected: InboxOutcome[] = []
          for (const d of group) expected.push(await acceptInTransaction(referenceTransaction, d))
          expect(actual, `seed ${seed}, round ${round}`).toEqual(expected)
        }
        for (const table of Object.keys(TABLES) as Array<keyof typeof TABLES>)
          expect(await dump(inboxStores, schemas[0], table), `seed ${seed}, ${table}`).toEqual(
            await dump(reference, schemas[1], table),
          )
      } finally {
        await inboxStores.close()
        await reference.close()
        await dropSchema(url, schemas[0])
        await dropSchema(url, schemas[1])
      }
    })
  })
}

/** The dedup tables, compared row by row (fences are random on both sides; counters as the sums of their stripes). */
const TABLES = {
  claims: 'namespace, scope, key, fingerprint, state, lease_until, expires_at, result',
  claim_scope_counts: 'namespace, scope, sum(records)::bigint AS records',
  terminals: 'sender, task_id, comparison, state, owner, lease_until, expires_at',
  replay_nonces: 'keyid, nonce, expires_at',
  replay_key_counts: 'keyid, sum(entries)::bigint AS entries',
}

/** The key columns a counter table's stripes are summed by. */
const SUMMED: Partial<Record<keyof typeof TABLES, string>> = {
  claim_scope_counts: 'namespace, scope',
  replay_key_counts: 'keyid',
}

async function dump(stores: PostgresStores, schema: string, table: keyof typeof TABLES) {
  const columns = TABLES[table]
  const groupBy = SUMMED[table]
  const sql = groupBy
    ? `SELECT ${columns} FROM "${schema}".${table} GROUP BY ${groupBy} ORDER BY ${groupBy}`
    : `SELECT ${columns} FROM "${schema}".${table} ORDER BY ${columns}`
  return (await stores.pool.query(sql)).rows
}

const withoutFence = (value: unknown) =>
  JSON.parse(JSON.stringify(value, (key, item: unknown) => (key === 'fence' ? undefined : item))) as unknown

/** A seeded generator (xorshift32), so that a failing sequence can be replayed from its seed. */
function generator(seed: number) {
  let state = seed * 2_654_435_761 || 1
  const next = () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 4_294_967_296
  }
  return { pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]! }
}

function taskObservation(
  { pick }: ReturnType<typeof generator>,
  sender: string,
  deliveryKey: string,
  now: number,
): TaskObservation {
  return {
    sender,
    taskId: pick(['t1', 't2']),
    terminal: pick([true, true, false]),
    comparison: pick(['1', '2']).repeat(64),
    deliveryKey,
    now,
    leaseSeconds: pick([5, 20]),
    retentionSeconds: pick([40, 200]),
  }
}

/** A delivery over small keyspaces, so that nonces, claims, tasks and notifications meet. */
function randomDelivery(random: ReturnType<typeof generator>, now: number): InboxDelivery {
  const { pick } = random
  const scope = pick(['s1', 's2'])
  const key = pick(['k1', 'k2', 'k3', 'k4'])
  const observation = pick([true, false]) ? taskObservation(random, scope, key, now) : undefined
  const notificationId = pick([undefined, undefined, 'n1', 'n2'])
  const maxPerScope = pick([undefined, 2, 3, 100])
  return {
    ...(pick([true, true, true, false])
      ? {
          nonce: {
            keyid: pick(['kid-1', 'kid-2']),
            nonce: `n${pick([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16])}`,
            expiresAt: now + pick([5, 40]),
            cap: pick([4, 10, 100]),
          },
        }
      : {}),
    claim: {
      namespace: 'webhook',
      scope,
      key,
      fingerprint: pick(['a', 'a', 'b']).repeat(64),
      now,
      leaseSeconds: pick([5, 20]),
      retentionSeconds: pick([40, 200]),
      ...(maxPerScope === undefined ? {} : { maxPerScope }),
    },
    ...(observation ? { observation } : {}),
    ...(notificationId ? { notificationId } : {}),
    event: {
      registrationId: 'differential',
      sender: scope,
      shape: 'mcp',
      idempotencyKey: key,
      terminal: observation?.terminal ?? false,
      data: null,
      payload: {},
      body: new Uint8Array(),
      receivedAt: now,
    },
  }
}

/** The inbox's lock order (keyid, claim scope, task; absent first), so that the group keeps this order. */
function lockOrder(a: InboxDelivery, b: InboxDelivery): number {
  const compare = (x: string | undefined, y: string | undefined) =>
    x === y ? 0 : x === undefined ? -1 : y === undefined ? 1 : x < y ? -1 : 1
  return (
    compare(a.nonce?.keyid, b.nonce?.keyid) ||
    compare(a.claim.scope, b.claim.scope) ||
    compare(a.observation?.taskId, b.observation?.taskId)
  )
}
