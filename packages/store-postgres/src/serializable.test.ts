/**
 * The stores at SERIALIZABLE and at REPEATABLE READ, where PostgreSQL answers contention with serialisation
 * failures (SQLSTATE 40001), as CockroachDB and YugabyteDB do: five instances (four on pools they create, one on a
 * pool it is given) race conflicting inbox groups, single claims, nonces and convergence rows, and outbox
 * workers. Every failure must be retried whole (counted through `onRetry`), and the counts must come out as
 * at READ COMMITTED: each delivery published once or answered as a duplicate, each entry sent once.
 */
import { inboxDelivery, outboxEntry } from '@adwire/store-contract'
import { dropSchema, freshSchemaName, resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import type { InboxDelivery, InboxOutcome } from '@adwire/webhooks'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RetryEvent } from './database.js'
import { StoreError } from './errors.js'
import { openPostgresStores, type PostgresStores } from './open.js'

const url = await resolveTestPostgresUrl()

/** How many of `values` are each value, as a sorted list of [value, count]. */
const tally = (values: readonly string[]) =>
  [
    ...values.reduce((map, value) => map.set(value, (map.get(value) ?? 0) + 1), new Map<string, number>()),
  ].sort()

if (!url) {
  describe.skip('PostgreSQL stores at SERIALIZABLE (ADWIRE_TEST_POSTGRES_URL unset or unreachable)', () => {
    it('needs a PostgreSQL server', () => {})
  })
} else {
  describe.each(['serializable', 'repeatable read'] as const)(
    'PostgreSQL stores at %s under conflicting concurrency',
    (isolation) => {
      const schema = freshSchemaName()
      const events = `"${schema}".inbox_events`
      const retries: RetryEvent[] = []
      const onRetry = (event: RetryEvent) => retries.push(event)
      const retry = { attempts: 200, baseDelayMs: 1, maxDelayMs: 20 }
      let given: pg.Pool
      let instances: PostgresStores[]

      beforeAll(async () => {
        given = new pg.Pool({ connectionString: url, max: 4 })
        const first = await openPostgresStores({ connectionString: url, schema, isolation })
        await first.pool.query(`CREATE TABLE ${events} (scope text NOT NULL, key text NOT NULL)`)
        await first.close()
        instances = await Promise.all([
          ...[1, 2, 3, 4].map(() =>
            openPostgresStores({
              connectionString: url,
              schema,
              maxConnections: 4,
              isolation,
              retry,
              onRetry,
            }),
          ),
          // A pool the stores did not create: each single statement gets a transaction of its own at the level.
          openPostgresStores({ pool: given, schema, isolation, retry, onRetry }),
        ])
      })
      afterAll(async () => {
        await Promise.all((instances ?? []).map((handle) => handle.close()))
        await given?.end()
        await dropSchema(url, schema)
      })

      it('runs every connection of its own pools at the level, and a given pool at its own default', async () => {
        const level = async (client: pg.Pool) =>
          (
            await client.query<{ level: string }>('SELECT current_setting($1) AS level', [
              'transaction_isolation',
            ])
          ).rows[0]!.level
        expect(await level(instances[0]!.pool)).toBe(isolation)
        expect(await level(given)).toBe('read committed')
      })

      it('retries conflicting inbox groups whole: each key published once, every other copy a duplicate', async () => {
        retries.length = 0
        const senders = ['sender-a', 'sender-b', 'sender-c']
        const deliveries: InboxDelivery[] = []
        const expectedKeys: string[] = []
        for (const sender of senders) {
          // Plain keys, each delivered three times (fresh nonces of the sender's one keyid), one copy of
          // each with the same nonce twice (a replay).
          for (let index = 0; index < 15; index += 1) {
            const key = `${sender}-key-${index}`
            const base = inboxDelivery(sender, key)
            deliveries.push(base, { ...base }, inboxDelivery(sender, key), inboxDelivery(sender, key))
            expectedKeys.push(key)
          }
          // Terminal outcomes of a few tasks, each sent under three keys: one publication per task.
          for (let task = 0; task < 4; task += 1) {
            for (let copy = 0; copy < 3; copy += 1) {
              const key = `${sender}-task-${task}-copy-${copy}`
              deliveries.push(
                inboxDelivery(sender, key, {
                  observation: {
                    sender,
                    taskId: `task-${task}`,
                    terminal: true,
                    comparison: `completed-${task}`,
                    deliveryKey: key,
                    now: 1_000,
                    leaseSeconds: 30,
                    retentionSeconds: 86_400,
                  },
                }),
              )
            }
          }
        }
        const inboxes = instances.map((handle) =>
          handle.createInbox({
            maxGroup: 16,
            async write(event, client) {
              await client.query(`INSERT INTO ${events} (scope, key) VALUES ($1, $2)`, [
                event.sender,
                event.idempotencyKey,
              ])
            },
          }),
        )
        // Spread over the five instances, in an order that puts copies of one key in different groups.
        const outcomes: Array<{ delivery: InboxDelivery; outcome: InboxOutcome }> = await Promise.all(
          deliveries.map(async (delivery, index) => ({
            delivery,
            outcome: await inboxes[(index * 7) % inboxes.length]!.accept(delivery),
          })),
        )

        const published = outcomes.filter(({ outcome }) => outcome.kind === 'published')
        const plain = published.filter(({ delivery }) => !delivery.observation)
        // Every plain key once, nothing else published under a plain key.
        expect(plain.map(({ delivery }) => delivery.claim.key).sort()).toEqual([...expectedKeys].sort())
        // One publication per task, whichever key won.
        const tasks = published
          .filter(({ delivery }) => delivery.observation)
          .map(({ delivery }) => `${delivery.claim.scope}/${delivery.observation!.taskId}`)
        expect(tally(tasks)).toEqual(
          senders.flatMap((sender) => [0, 1, 2, 3].map((task) => [`${sender}/task-${task}`, 1])).sort(),
        )
        // The rest: a replayed nonce, a completed claim (a copy of a published key) or a duplicate terminal.
        for (const { delivery, outcome } of outcomes) {
          if (outcome.kind === 'published') continue
          if (outcome.kind === 'replayed') continue
          if (outcome.kind === 'claim') expect(outcome.claim).toEqual({ kind: 'completed', result: null })
          else expect(outcome, delivery.claim.key).toEqual({ kind: 'convergence', result: 'duplicate' })
        }
        // Each same-nonce pair: exactly one of the two got past the nonce check.
        expect(outcomes.filter(({ outcome }) => outcome.kind === 'replayed')).toHaveLength(
          senders.length * 15,
        )
        // The events written are exactly the publications: nothing lost, nothing doubled.
        const { rows } = await instances[0]!.pool.query<{ scope: string; key: string }>(
          `SELECT scope, key FROM ${events}`,
        )
        expect(rows.map((row) => row.key).sort()).toEqual(
          published.map(({ delivery }) => delivery.claim.key).sort(),
        )
        // The nonce counters (the sums of their stripes) equal the nonces stored (one per distinct nonce that got through).
        const counters = await instances[0]!.pool.query<{ keyid: string; entries: string; rows: string }>(
          `SELECT k.keyid, sum(k.entries)::text AS entries,
                  (SELECT count(*) FROM "${schema}".replay_nonces n WHERE n.keyid = k.keyid)::text AS rows
           FROM "${schema}".replay_key_counts k WHERE k.keyid = ANY($1::text[]) GROUP BY k.keyid ORDER BY k.keyid`,
          [senders.map((sender) => `kid-${sender}`)],
        )
        expect(counters.rows).toEqual(
          senders.map((sender) => ({
            keyid: `kid-${sender}`,
            entries: String(15 * 3 + 12),
            rows: String(15 * 3 + 12),
          })),
        )
        // Conflicts did happen, and were retried: the groups were run again whole.
        const inboxRetries = retries.filter((event) => event.what === 'inbox')
        expect(inboxRetries.length).toBeGreaterThan(0)
        expect(new Set(inboxRetries.map((event) => event.code))).toContain('40001')
      })

      it('retries single statements: claims, nonces and convergence rows of one key decided once', async () => {
        retries.length = 0
        const keys = Array.from({ length: 20 }, (_, index) => `single-${index}`)
        const claims = await Promise.all(
          keys.flatMap((key) =>
            instances.map(async (handle) => ({
              key,
              result: await handle.claims.claim({
                namespace: 'webhook',
                scope: 'single-sender',
                key,
                fingerprint: 'f'.repeat(64),
                now: 1_000,
                leaseSeconds: 30,
                retentionSeconds: 86_400,
                maxPerScope: 10_000,
              }),
            })),
          ),
        )
        const claimed = claims.filter(({ result }) => result.kind === 'claimed').map(({ key }) => key)
        expect(claimed.sort()).toEqual([...keys].sort())
        expect(
          claims.filter(({ result }) => result.kind !== 'claimed').map(({ result }) => result.kind),
        ).toEqual(Array.from({ length: keys.length * (instances.length - 1) }, () => 'processing'))

        const remembered = await Promise.all(
          Array.from({ length: 60 }, (_, index) =>
            instances[index % instances.length]!.replay.remember(
              'kid-single',
              `nonce-${index % 30}`,
              2_000,
              1_000,
              1_000,
            ),
          ),
        )
        expect(tally(remembered)).toEqual([
          ['replayed', 30],
          ['stored', 30],
        ])

        const verdicts = await Promise.all(
          Array.from({ length: 25 }, (_, index) =>
            instances[index % instances.length]!.convergence.observe({
              sender: 'single-sender',
              taskId: `task-${index % 5}`,
              terminal: true,
              comparison: 'completed',
              deliveryKey: `delivery-${index}`,
              now: 1_000,
              leaseSeconds: 30,
              retentionSeconds: 86_400,
            }),
          ),
        )
        expect(tally(verdicts)).toEqual([
          ['in_progress', 20],
          ['proceed', 5],
        ])
        expect(retries.length).toBeGreaterThan(0)
        expect(retries.every((event) => event.code === '40001' || event.code === '40P01')).toBe(true)
      })

      it('sends each outbox entry once with concurrent workers leasing and recording', async () => {
        retries.length = 0
        const destinations = ['buyer-1', 'buyer-2']
        const ids: string[] = []
        await Promise.all(
          Array.from({ length: 200 }, async (_, index) => {
            const id = `entry-${index}`
            ids.push(id)
            await instances[index % instances.length]!.outbox.enqueue(
              outboxEntry(destinations[index % 2]!, {
                id,
                url: `https://${destinations[index % 2]}.example/webhooks`,
                mediaBuyIds: [`buy-${index % 4}`],
              }),
            )
          }),
        )
        const sent: string[] = []
        const lost: string[] = []
        await Promise.all(
          instances.flatMap((handle) =>
            [1, 2].map(async () => {
              for (;;) {
                const batch = await handle.outbox.lease(1_000, 3, 60)
                if (batch.length === 0) return
                for (const entry of batch) {
                  const recorded = await handle.outbox.record(
                    entry.id,
                    entry.fence,
                    { kind: 'delivered', httpStatus: 200 },
                    1_001,
                  )
                  ;(recorded ? sent : lost).push(entry.id)
                }
              }
            }),
          ),
        )
        expect(lost).toEqual([])
        expect(sent.sort()).toEqual([...ids].sort())
        expect(await instances[0]!.outbox.pending()).toEqual([])
        const activity = await Promise.all(
          destinations.map((destination) => instances[0]!.outbox.activity(destination, 1_000)),
        )
        expect(activity.flat()).toHaveLength(200)
        // Whether a lease or a record met a serialization failure here depends on timing (on a loaded machine
        // the workers may not overlap at all), so it is not asserted; the inbox test above requires retries.
      })

      it('supersedes racing coalesced enqueues down to one pending entry (their lock is taken at READ COMMITTED)', async () => {
        // Ten coalesce keys, each enqueued six times at once on an empty outbox: with the snapshot taken
        // before the lock, a later enqueue would miss the entry committed while it waited, and keep two.
        const keys = Array.from({ length: 10 }, (_, index) => `status-${index}`)
        const results = await Promise.all(
          keys.flatMap((coalesceKey) =>
            Array.from({ length: 6 }, (_, index) =>
              instances[index % instances.length]!.outbox.enqueue({
                id: `${coalesceKey}-${index}`,
                destination: 'coalesce-buyer',
                url: 'https://coalesce-buyer.example/webhooks',
                idempotencyKey: `idem-${coalesceKey}-${index}`.padEnd(24, 'x'),
                body: '{}',
                headers: {},
                coalesceKey,
                createdAt: 1_000,
                nextAttemptAt: 1_000,
                deadlineAt: 90_000,
                mediaBuyIds: [`buy-${coalesceKey}`],
              }),
            ),
          ),
        )
        const pending = await instances[0]!.outbox.pending('coalesce-buyer')
        expect(tally(pending.map((entry) => entry.coalesceKey!))).toEqual(keys.map((key) => [key, 1]))
        // Every other entry superseded exactly once, by the one enqueued after it.
        const kept = new Set(pending.map((entry) => entry.id))
        expect(results.flatMap((result) => result.superseded).sort()).toEqual(
          keys
            .flatMap((key) => Array.from({ length: 6 }, (_, index) => `${key}-${index}`))
            .filter((id) => !kept.has(id))
            .sort(),
        )
      })

      it('rejects with store_retries_exhausted when every attempt conflicts, keeping nothing of it', async () => {
        // A real 40001 from the server on every attempt: a trigger failing each new claim of one scope.
        await given.query(
          `CREATE FUNCTION "${schema}".always_conflict() RETURNS trigger LANGUAGE plpgsql AS $fn$
         BEGIN RAISE EXCEPTION 'forced conflict' USING ERRCODE = 'serialization_failure'; END $fn$`,
        )
        await given.query(
          `CREATE TRIGGER always_conflict BEFORE INSERT ON "${schema}".claims
           FOR EACH ROW WHEN (NEW.scope = 'exhausted') EXECUTE FUNCTION "${schema}".always_conflict()`,
        )
        const seen: RetryEvent[] = []
        const stores = await openPostgresStores({
          connectionString: url,
          schema,
          maxConnections: 2,
          isolation,
          retry: { attempts: 3, baseDelayMs: 0, maxDelayMs: 0 },
          onRetry: (event) => seen.push(event),
        })
        try {
          const claimed = await stores.claims
            .claim({
              namespace: 'webhook',
              scope: 'exhausted',
              key: 'k',
              fingerprint: 'f'.repeat(64),
              now: 1_000,
              leaseSeconds: 30,
              retentionSeconds: 86_400,
            })
            .then(
              () => undefined,
              (error: unknown) => error,
            )
          expect(StoreError.is(claimed) && claimed.code).toBe('store_retries_exhausted')
          expect((claimed as Error).message).toMatch(
            /claim failed 3 times in a row with a serialization failure \(SQLSTATE 40001\)/,
          )
          expect(seen.map((event) => [event.what, event.attempt, event.code])).toEqual([
            ['claim', 1, '40001'],
            ['claim', 2, '40001'],
          ])

          // A group with one such delivery: the whole group is retried, then every delivery refused, and
          // nothing of any of them is kept (no nonce, no claim, no event).
          seen.length = 0
          const inbox = stores.createInbox({
            async write(event, client) {
              await client.query(`INSERT INTO ${events} (scope, key) VALUES ($1, $2)`, [
                event.sender,
                event.idempotencyKey,
              ])
            },
          })
          const group = [inboxDelivery('exhausted-neighbour', 'n-1'), inboxDelivery('exhausted', 'e-1')]
          const answers = await Promise.all(
            group.map((delivery) =>
              inbox.accept(delivery).then(
                () => undefined,
                (error: unknown) => error,
              ),
            ),
          )
          expect(answers.map((error) => StoreError.is(error) && error.code)).toEqual([
            'store_retries_exhausted',
            'store_retries_exhausted',
          ])
          expect(seen.map((event) => [event.what, event.attempt])).toEqual([
            ['inbox', 1],
            ['inbox', 2],
          ])
          for (const delivery of group)
            expect(await stores.replay.seen(delivery.nonce!.keyid, delivery.nonce!.nonce, 1_000)).toBe(false)
          const written = await stores.pool.query(`SELECT 1 FROM ${events} WHERE scope LIKE 'exhausted%'`)
          expect(written.rowCount).toBe(0)
        } finally {
          await stores.close()
          await given.query(`DROP TRIGGER always_conflict ON "${schema}".claims`)
        }
      })
    },
  )
}
