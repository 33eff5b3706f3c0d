/**
 * Generations (migration 6): maintenance rotates the generations of claims, terminal records and nonces and
 * drops a generation's partitions whole once all its rows expired; a key decided in an older generation is
 * still decided there after a rotation (a duplicate stays a duplicate), a dropped key is accepted again, an
 * expired row taken over moves to the current generation with its count, concurrent decisions of the same keys
 * while rotations run give one winner per key at every isolation level (at REPEATABLE READ only thanks to the
 * snapshot check of migration 6), and a sequence moved by a rotation that did not commit is recorded by the
 * next maintenance.
 */
import { inboxDelivery } from '@adwire/store-contract'
import {
  dropSchema,
  freshSchemaName,
  queryOnce,
  resolveTestPostgresUrl,
} from '@adwire/vitest-config/postgres'
import { afterEach, describe, expect, it } from 'vitest'
import type { IsolationLevel } from './database.js'
import { openPostgresStores, type PostgresStores } from './open.js'

const url = await resolveTestPostgresUrl()
/** The simulated clock's start. */
const T = 1_800_000_000
const HOUR = 3_600
const DAY = 86_400
/** A retention no rotation in these tests reaches. */
const FOREVER = 100 * 365 * DAY

describe.skipIf(!url)('PostgreSQL generations', () => {
  const opened: Array<{ stores: PostgresStores; schema: string }> = []
  async function open(options: { isolation?: IsolationLevel; maxConnections?: number } = {}) {
    const schema = freshSchemaName()
    const stores = await openPostgresStores({ connectionString: url!, schema, now: () => T, ...options })
    opened.push({ stores, schema })
    return { stores, schema, quoted: `"${schema}"` }
  }
  afterEach(async () => {
    for (const { stores, schema } of opened.splice(0)) {
      await stores.close()
      await dropSchema(url!, schema)
    }
  })

  const claim = (key: string, now: number, retentionSeconds = DAY, fingerprint = 'a') => ({
    namespace: 'webhook' as const,
    scope: 'seller-g',
    key,
    fingerprint: fingerprint.repeat(64),
    now,
    leaseSeconds: 30,
    retentionSeconds,
    maxPerScope: 1_000,
  })
  const observation = (taskId: string, now: number, deliveryKey = 'd1', comparison = '1') => ({
    sender: 'seller-g',
    taskId,
    terminal: true,
    comparison: comparison.repeat(64),
    deliveryKey,
    now,
    leaseSeconds: 30,
    retentionSeconds: DAY,
  })

  /** The generation partitions of `table`, by number. */
  async function generations(schema: string, table: string): Promise<number[]> {
    const rows = await queryOnce<{ name: string }>(
      url!,
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         JOIN pg_class p ON p.oid = i.inhparent JOIN pg_namespace n ON n.oid = p.relnamespace
        WHERE n.nspname = $1 AND p.relname = $2`,
      [schema, table],
    )
    return rows.map((row) => Number(row.name.slice(table.length + 2))).sort((a, b) => a - b)
  }

  /** Keys whose counters' sum differs from the rows they count. */
  const drift = (quoted: string) =>
    queryOnce(
      url!,
      `SELECT s.scope FROM ${quoted}.claim_scope_counts s GROUP BY s.namespace, s.scope
        HAVING sum(s.records) <> (SELECT count(*) FROM ${quoted}.claims c WHERE c.namespace = s.namespace AND c.scope = s.scope)
       UNION ALL
       SELECT k.keyid FROM ${quoted}.replay_key_counts k GROUP BY k.keyid
        HAVING sum(k.entries) <> (SELECT count(*) FROM ${quoted}.replay_nonces n WHERE n.keyid = k.keyid)
       UNION ALL
       SELECT s.scope || '/' || s.generation FROM ${quoted}.claim_scope_counts s GROUP BY s.namespace, s.scope, s.generation
        HAVING sum(s.records) <> (SELECT count(*) FROM ${quoted}.claims c
                                   WHERE c.namespace = s.namespace AND c.scope = s.scope AND c.generation = s.generation)`,
    )

  it('rotates, keeps live rows across rotations, drops expired generations whole and accepts their keys again', async () => {
    const { stores, schema, quoted } = await open()
    // Generation 1 is current from T; 2 and 3 exist ahead.
    expect(await generations(schema, 'claims')).toEqual([1, 2, 3])
    expect(await generations(schema, 'claim_scope_counts')).toEqual([1, 2, 3])

    const first = await stores.claims.claim(claim('kept', T))
    if (first.kind !== 'claimed') throw new Error('expected a claim')
    await stores.claims.claim(claim('short', T, 100))
    const done = await stores.claims.claim(claim('done', T))
    if (done.kind !== 'claimed') throw new Error('expected a claim')
    const ref = { namespace: 'webhook' as const, scope: 'seller-g', key: 'done', fence: done.fence }
    expect(await stores.claims.complete(ref, T, 'result')).toBe(true)
    // A delivery published through the inbox; its retry (signed again: another nonce) comes after a rotation.
    const inbox = stores.createInbox({ write: async () => {} })
    const delivery = (now: number, nonce: string) =>
      inboxDelivery('seller-g', 'delivered', {
        nonce: { keyid: 'kid-inbox', nonce, expiresAt: now + 360, cap: 1_000 },
        claim: claim('delivered', now),
      })
    expect((await inbox.accept(delivery(T, 'first'))).kind).toBe('published')
    expect(await stores.replay.remember('kid-g', 'n-old', T + 300, 1_000, T)).toBe('stored')
    expect(await stores.replay.remember('kid-g', 'n-long', T + 2 * HOUR, 1_000, T)).toBe('stored')
    expect(await stores.convergence.observe(observation('task-1', T))).toBe('proceed')

    // Not yet due: nothing rotates, nothing is dropped.
    expect(await stores.sweep(T + HOUR - 1)).toMatchObject({ claims: 0, replay: 0, convergence: 0 })
    expect(await generations(schema, 'replay_nonces')).toEqual([1, 2, 3])

    // An hour on, the nonces rotate; their generation 1 still holds a live nonce, so it stays.
    await stores.sweep(T + HOUR)
    expect(await generations(schema, 'replay_nonces')).toEqual([1, 2, 3, 4])
    expect(await stores.replay.remember('kid-g', 'n-long', T + 3 * HOUR, 1_000, T + HOUR)).toBe('replayed')
    // An expired nonce of generation 1 is taken over: it moves to generation 2, with its count.
    expect(await stores.replay.remember('kid-g', 'n-old', T + 2 * HOUR, 1_000, T + HOUR)).toBe('stored')
    expect(
      await queryOnce(
        url!,
        `SELECT nonce, generation::int FROM ${quoted}.replay_nonces WHERE keyid = 'kid-g' ORDER BY nonce`,
      ),
    ).toEqual([
      { nonce: 'n-long', generation: 1 },
      { nonce: 'n-old', generation: 2 },
    ])
    expect(await drift(quoted)).toEqual([])

    // Six hours on, claims and terminal records rotate: what generation 1 decided is still decided.
    await stores.sweep(T + 6 * HOUR)
    expect(await generations(schema, 'claims')).toEqual([1, 2, 3, 4])
    expect(await stores.claims.claim(claim('kept', T + 6 * HOUR))).toMatchObject({ kind: 'claimed' })
    // ('kept' was never completed and its lease ended: a takeover, in its own generation.)
    expect(
      await queryOnce(url!, `SELECT key, generation::int FROM ${quoted}.claims WHERE key = 'kept'`),
    ).toEqual([{ key: 'kept', generation: 1 }])
    expect(await stores.claims.claim(claim('kept', T + 6 * HOUR, DAY, 'b'))).toEqual({ kind: 'conflict' })
    // Duplicates of generation 1 are still duplicates, through the store and through the inbox.
    expect(await stores.claims.claim(claim('done', T + 6 * HOUR))).toEqual({
      kind: 'completed',
      result: 'result',
    })
    expect(await inbox.accept(delivery(T + 6 * HOUR, 'retry'))).toEqual({
      kind: 'claim',
      claim: { kind: 'completed', result: null },
    })
    expect(await stores.convergence.observe(observation('task-1', T + 6 * HOUR, 'd2', '2'))).toBe('conflict')
    // The expired claim of generation 1 is taken over in generation 2.
    expect(await stores.claims.claim(claim('short', T + 6 * HOUR, 100, 'b'))).toMatchObject({
      kind: 'claimed',
      takeover: false,
    })
    expect(await queryOnce(url!, `SELECT generation::int FROM ${quoted}.claims WHERE key = 'short'`)).toEqual(
      [{ generation: 2 }],
    )
    expect(await drift(quoted)).toEqual([])
    // The nonces rotated again (to 3); generations 1 and 2 have expired by now (at T + 2 h): dropped, with their
    // counters.
    expect(await generations(schema, 'replay_nonces')).toEqual([3, 4, 5])
    expect(await generations(schema, 'replay_key_counts')).toEqual([3, 4, 5])

    // Past a day, generation 1 of claims and terminals has expired whole: dropped, and its keys are free again.
    const swept = await stores.sweep(T + DAY + 6 * HOUR)
    // 'kept', 'done' and 'delivered' of generation 1, 'short' of generation 2.
    expect(swept.claims).toBe(4)
    expect(await generations(schema, 'claims')).toEqual([3, 4, 5])
    expect(await generations(schema, 'terminals')).toEqual([3, 4, 5])
    expect(await stores.claims.claim(claim('kept', T + DAY + 6 * HOUR, DAY, 'b'))).toMatchObject({
      kind: 'claimed',
      takeover: false,
    })
    expect(await stores.convergence.observe(observation('task-1', T + DAY + 6 * HOUR, 'd2', '2'))).toBe(
      'proceed',
    )
    expect(
      await stores.replay.remember('kid-g', 'n-long', T + DAY + 7 * HOUR, 1_000, T + DAY + 6 * HOUR),
    ).toBe('stored')
    expect(await drift(quoted)).toEqual([])
  })

  it('decides a group whose keys are in an older generation as one delivery at a time does', async () => {
    const { stores, quoted } = await open()
    const inbox = stores.createInbox({ write: async () => {} })
    const delivery = (
      key: string,
      now: number,
      nonce: string,
      overrides: Parameters<typeof inboxDelivery>[2] = {},
    ) =>
      inboxDelivery('seller-g', key, {
        nonce: { keyid: 'kid-inbox', nonce, expiresAt: now + 7 * HOUR, cap: 1_000 },
        claim: claim(key, now),
        ...overrides,
      })
    const terminal = (key: string, now: number, comparison = '1') => ({
      observation: { ...observation('task-a', now, key, comparison) },
    })
    // Generation 1: a published terminal delivery with a notification, a claim that expires soon, and a nonce
    // that outlives the rotations below.
    expect(
      (
        await inbox.accept(
          delivery('g-done', T, 'n-done', { ...terminal('g-done', T), notificationId: 'note-1' }),
        )
      ).kind,
    ).toBe('published')
    expect(
      (await inbox.accept(delivery('g-short', T, 'n-short', { claim: claim('g-short', T, 100) }))).kind,
    ).toBe('published')
    expect((await inbox.accept(delivery('g-live', T, 'n-live'))).kind).toBe('published')
    await stores.sweep(T + 6 * HOUR)
    expect(await queryOnce(url!, `SELECT DISTINCT generation::int FROM ${quoted}.claims ORDER BY 1`)).toEqual(
      [{ generation: 1 }],
    )

    // One group (accepted in one turn), each key decided against its row of generation 1.
    const now = T + 6 * HOUR
    const outcomes = await Promise.all([
      inbox.accept(delivery('g-done', now, 'n-done-2', terminal('g-done', now))),
      inbox.accept(delivery('g-other', now, 'n-live')),
      inbox.accept(delivery('g-short', now, 'n-short-2')),
      inbox.accept(delivery('g-same', now, 'n-same', terminal('g-same', now))),
      inbox.accept(delivery('g-note', now, 'n-note', { notificationId: 'note-1' })),
      inbox.accept(delivery('g-changed', now, 'n-changed', terminal('g-changed', now, '2'))),
      inbox.accept(delivery('g-fresh', now, 'n-fresh', terminal('g-fresh', now))),
    ])
    expect(outcomes[0]).toEqual({ kind: 'claim', claim: { kind: 'completed', result: null } })
    expect(outcomes[1]).toEqual({ kind: 'replayed' })
    expect(outcomes[2]).toMatchObject({ kind: 'published', event: { takeover: false, reemission: false } })
    expect(outcomes[3]).toEqual({ kind: 'convergence', result: 'duplicate' })
    expect(outcomes[4]).toMatchObject({ kind: 'published', event: { reemission: true } })
    expect(outcomes[5]).toEqual({ kind: 'convergence', result: 'conflict' })
    expect(outcomes[6]).toEqual({ kind: 'convergence', result: 'duplicate' })
    // The expired claim moved to generation 2; every key has one row, every counter its rows.
    expect(
      await queryOnce(
        url!,
        `SELECT key, generation::int, state FROM ${quoted}.claims WHERE key LIKE 'g-%' ORDER BY key`,
      ),
    ).toEqual([
      { key: 'g-changed', generation: 2, state: 'processing' },
      { key: 'g-done', generation: 1, state: 'completed' },
      { key: 'g-fresh', generation: 2, state: 'completed' },
      { key: 'g-live', generation: 1, state: 'completed' },
      { key: 'g-note', generation: 2, state: 'completed' },
      { key: 'g-same', generation: 2, state: 'completed' },
      { key: 'g-short', generation: 2, state: 'completed' },
    ])
    expect(
      await queryOnce(url!, `SELECT task_id, generation::int, state, owner FROM ${quoted}.terminals`),
    ).toEqual([{ task_id: 'task-a', generation: 1, state: 'published', owner: 'g-done' }])
    expect(await drift(quoted)).toEqual([])
  })

  it('keeps a generation whose rows are not all expired, and holds the caps across generations', async () => {
    const { stores, schema } = await open()
    const capped = (key: string, now: number) => ({ ...claim(key, now, 10 * HOUR), maxPerScope: 3 })
    expect(await stores.claims.claim(capped('c1', T))).toMatchObject({ kind: 'claimed' })
    expect(await stores.claims.claim(capped('c2', T))).toMatchObject({ kind: 'claimed' })
    await stores.sweep(T + 6 * HOUR)
    expect(await stores.claims.claim(capped('c3', T + 6 * HOUR))).toMatchObject({ kind: 'claimed' })
    // Three live claims in two generations: the cap counts them all.
    expect(await stores.claims.claim(capped('c4', T + 6 * HOUR))).toEqual({ kind: 'capacity' })
    // At T + 12 h generation 1's claims have expired (T + 10 h): dropped; generation 2's (c3) stays.
    await stores.sweep(T + 12 * HOUR)
    expect(await generations(schema, 'claims')).toEqual([2, 3, 4, 5])
    expect(await stores.claims.claim(capped('c4', T + 12 * HOUR))).toMatchObject({ kind: 'claimed' })
    expect(
      await stores.claims.claim({ ...capped('c3', T + 12 * HOUR), fingerprint: 'b'.repeat(64) }),
    ).toEqual({
      kind: 'conflict',
    })
  })

  it('records a generation whose rotation did not commit before decisions at repeatable read go on', async () => {
    const { stores, quoted } = await open({ isolation: 'repeatable read' })
    const retries: string[] = []
    const impatient = await openPostgresStores({
      connectionString: url!,
      schema: opened.at(-1)!.schema,
      isolation: 'repeatable read',
      retry: { attempts: 2, baseDelayMs: 0 },
      onRetry: (event) => void retries.push(event.code),
      now: () => T,
    })
    try {
      // A rotation that set the sequence and then failed to commit: the sequence does not roll back.
      await queryOnce(url!, `SELECT setval('${quoted}.claims_generation', 2, true)`)
      // Every snapshot misses the generation in use: refused as a serialisation failure, never decided stale.
      const refused = await impatient.claims
        .claim(claim('k', T))
        .catch((error: { code?: string }) => error.code)
      expect(refused).toBe('store_retries_exhausted')
      expect(retries).toEqual(['40001'])
      await stores.claims.maintain(T)
      expect(await impatient.claims.claim(claim('k', T))).toMatchObject({ kind: 'claimed' })
      expect(await queryOnce(url!, `SELECT generation::int FROM ${quoted}.claims WHERE key = 'k'`)).toEqual([
        { generation: 2 },
      ])
    } finally {
      await impatient.close()
    }
  })

  it.each(['read committed', 'repeatable read', 'serializable'] as const)(
    'gives each key one winner while rotations run under concurrent decisions (%s)',
    async (isolation) => {
      const { stores, quoted } = await open({ isolation, maxConnections: 8 })
      const peer = await openPostgresStores({
        connectionString: url!,
        schema: opened.at(-1)!.schema,
        isolation,
        maxConnections: 8,
        now: () => T,
      })
      try {
        const handles = [stores, peer]
        const inboxes = handles.map((handle) => handle.createInbox({ write: async () => {} }))
        let running = true
        let rotations = 0
        // Rotations one after the other, each due (the clock moves a generation on every time).
        const rotator = (async () => {
          let now = T
          while (running) {
            now += 6 * HOUR
            const results = await Promise.all([
              stores.claims.maintain(now),
              stores.replay.maintain(now),
              stores.convergence.maintain(now),
            ])
            rotations += results.filter((result) => result.rotated).length
            // A pause, so that the partitions (none is dropped: every row stays live) stay few.
            await new Promise((resolve) => setTimeout(resolve, 30))
          }
        })()
        const claims: Array<Promise<string>> = []
        const nonces: Array<Promise<string>> = []
        const terminals: Array<Promise<string>> = []
        const published: Array<Promise<string>> = []
        const KEYS = 24
        const COPIES = 6
        const ROUNDS = 8
        for (let round = 0; round < ROUNDS; round += 1) {
          for (let key = 0; key < KEYS; key += 1) {
            for (let copy = 0; copy < COPIES; copy += 1) {
              const handle = handles[copy % 2]!
              // Fresh keys each round, live for longer than the rotations' clock runs: the copies race a rotation to the first insert.
              claims.push(
                handle.claims.claim(claim(`k-${round}-${key}`, T, FOREVER)).then((result) => result.kind),
              )
              nonces.push(handle.replay.remember('kid-race', `n-${round}-${key}`, T + FOREVER, 1_000_000, T))
              terminals.push(
                handle.convergence
                  .observe({ ...observation(`t-${round}-${key}`, T, `d-${copy}`), retentionSeconds: FOREVER })
                  .then((result) => result),
              )
              published.push(
                inboxes[copy % 2]!.accept(
                  inboxDelivery('seller-inbox', `i-${round}-${key}`, {
                    nonce: {
                      keyid: 'kid-inbox',
                      nonce: `i-${round}-${key}-${copy}`,
                      expiresAt: T + 600,
                      cap: 1_000_000,
                    },
                    claim: { ...claim(`i-${round}-${key}`, T, FOREVER), scope: 'seller-inbox' },
                  }),
                ).then((outcome) => outcome.kind),
              )
            }
          }
          await Promise.all([...claims, ...nonces, ...terminals, ...published])
        }
        running = false
        await rotator
        const count = async (list: Array<Promise<string>>, value: string) =>
          (await Promise.all(list)).filter((item) => item === value).length
        expect(await count(claims, 'claimed')).toBe(ROUNDS * KEYS)
        expect(await count(nonces, 'stored')).toBe(ROUNDS * KEYS)
        expect(await count(terminals, 'proceed')).toBe(ROUNDS * KEYS)
        expect(await count(published, 'published')).toBe(ROUNDS * KEYS)
        expect(rotations).toBeGreaterThan(0)
        // One row per key, whatever the generations, and every counter equal to its rows.
        expect(
          await queryOnce(
            url!,
            `SELECT key FROM ${quoted}.claims GROUP BY namespace, scope, key HAVING count(*) > 1
             UNION ALL SELECT nonce FROM ${quoted}.replay_nonces GROUP BY keyid, nonce HAVING count(*) > 1
             UNION ALL SELECT task_id FROM ${quoted}.terminals GROUP BY sender, task_id HAVING count(*) > 1`,
          ),
        ).toEqual([])
        expect(await drift(quoted)).toEqual([])
      } finally {
        await peer.close()
      }
    },
  )
})
