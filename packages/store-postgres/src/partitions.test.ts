/**
 * The outbox and webhook_activity expire by dropping whole time partitions (migration 5), on the caller's clock:
 * partitions are created ahead on open and by the sweep, a partition past retention is dropped (never while it
 * holds a pending entry), a write far beyond the last partition lands in the default one, a dropped entry's id
 * can be enqueued again, a drop that would wait behind an open transaction is left to the next sweep, a table
 * detached but not dropped is dropped later, and sweeps of several processes at once drop each partition once.
 */
import {
  dropSchema,
  freshSchemaName,
  queryOnce,
  resolveTestPostgresUrl,
} from '@adwire/vitest-config/postgres'
import { outboxEntry } from '@adwire/store-contract'
import { ACTIVITY_RETENTION_SECONDS } from '@adwire/webhooks'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresStores, type PostgresStores } from './open.js'
import { ACTIVITY_PARTITIONS } from './outbox-store.js'

const url = await resolveTestPostgresUrl()
/** A day's start on the simulated clock (2027-01-15). */
const T = 1_799_971_200
const HOUR = 3_600
const DAY = 86_400

describe.skipIf(!url)('PostgreSQL time partitions', () => {
  const schema = freshSchemaName()
  let stores: PostgresStores
  let others: PostgresStores[] = []
  const partitions = async (table: string) =>
    (
      await queryOnce<{ name: string }>(
        url!,
        `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
           JOIN pg_class p ON p.oid = i.inhparent JOIN pg_namespace n ON n.oid = p.relnamespace
          WHERE n.nspname = $1 AND p.relname = $2 ORDER BY c.relname`,
        [schema, table],
      )
    ).map((row) => row.name)

  beforeAll(async () => {
    stores = await openPostgresStores({ connectionString: url!, schema, now: () => T })
    others = await Promise.all(
      [1, 2].map(() => openPostgresStores({ connectionString: url!, schema, now: () => T })),
    )
  })
  afterAll(async () => {
    await Promise.all([stores, ...others].map((handle) => handle?.close()))
    await dropSchema(url!, schema)
  })

  it('creates the partitions ahead of the clock given on open', async () => {
    const outbox = await partitions('outbox')
    expect(outbox).toContain('outbox_default')
    // Six hours a partition, from the one holding T to two days ahead.
    for (let start = T; start <= T + 2 * DAY; start += 6 * HOUR) expect(outbox).toContain(`outbox_p${start}`)
    const activity = await partitions('webhook_activity')
    for (const start of [T, T + DAY, T + 2 * DAY]) expect(activity).toContain(`webhook_activity_p${start}`)
  })

  it('drops an outbox partition past its deadlines once it holds no pending entry; its ids are free again', async () => {
    const { outbox } = stores
    const entry = (id: string) =>
      outboxEntry('partitions', { id, createdAt: T, nextAttemptAt: T, deadlineAt: T + HOUR })
    await outbox.enqueue(entry('done'))
    await outbox.enqueue(entry('waiting'))
    const leased = await outbox.lease(T, 10, 30)
    const done = leased.find((item) => item.id === 'done')!
    expect(await outbox.record('done', done.fence, { kind: 'delivered', httpStatus: 200 }, T + 1)).toBe(true)

    // Past the partition's upper bound, but 'waiting' is still pending: the partition stays.
    await stores.sweep(T + 6 * HOUR)
    expect(await partitions('outbox')).toContain(`outbox_p${T}`)
    expect((await outbox.pending('partitions')).map((item) => item.id)).toEqual(['waiting'])
    await expect(outbox.enqueue(entry('done'))).rejects.toMatchObject({ code: 'store_duplicate_entry' })

    const waiting = leased.find((item) => item.id === 'waiting')!
    expect(
      await outbox.record(
        'waiting',
        waiting.fence,
        { kind: 'failed', httpStatus: 500, activityStatus: 'failed', error: 'gone' },
        T + 6 * HOUR,
      ),
    ).toBe(true)
    await stores.sweep(T + 6 * HOUR)
    const after = await partitions('outbox')
    expect(after).not.toContain(`outbox_p${T}`)
    // The sweep created the partitions ahead of its own clock.
    expect(after).toContain(`outbox_p${T + 6 * HOUR + 2 * DAY}`)
    // As for an entry the DELETE sweep removed: its fence records nothing, its id may be enqueued again.
    expect(
      await outbox.record('waiting', waiting.fence, { kind: 'delivered', httpStatus: 200 }, T + 7 * HOUR),
    ).toBe(false)
    await outbox.enqueue(entry('done'))
    expect((await outbox.pending('partitions')).map((item) => item.id)).toEqual(['done'])
    // The activity rows stay (30 days).
    expect(await outbox.activity('partitions')).toHaveLength(2)
  })

  it('accepts a write far beyond the last partition, and moves it into its partition when that is created', async () => {
    const far = T + 3_650 * DAY
    await stores.outbox.enqueue(
      outboxEntry('far', { id: 'far', createdAt: far, nextAttemptAt: far, deadlineAt: far + HOUR }),
    )
    const inDefault = await queryOnce(url!, `SELECT id FROM "${schema}".outbox_default WHERE id = 'far'`)
    expect(inDefault).toEqual([{ id: 'far' }])
    await stores.sweep(far)
    expect(await queryOnce(url!, `SELECT id FROM "${schema}".outbox_default WHERE id = 'far'`)).toEqual([])
    expect(await queryOnce(url!, `SELECT id FROM "${schema}"."outbox_p${far}" WHERE id = 'far'`)).toEqual([
      { id: 'far' },
    ])
    expect((await stores.outbox.pending('far')).map((item) => item.id)).toEqual(['far'])
    await expect(
      stores.outbox.enqueue(outboxEntry('far', { id: 'far', deadlineAt: T + HOUR })),
    ).rejects.toMatchObject({ code: 'store_duplicate_entry' })
  })

  it('drops a webhook_activity partition once its last second is 30 days old', async () => {
    const day = T + 5 * DAY
    await stores.outbox.maintain(ACTIVITY_PARTITIONS, day)
    await stores.outbox.enqueue(
      outboxEntry('activity', { id: 'activity', createdAt: day, nextAttemptAt: day, deadlineAt: day + HOUR }),
    )
    const [leased] = await stores.outbox
      .lease(day, 10, 30)
      .then((items) => items.filter((i) => i.id === 'activity'))
    await stores.outbox.record('activity', leased!.fence, { kind: 'delivered', httpStatus: 200 }, day + 10)
    expect(await stores.outbox.sweepActivity(day + 10 + ACTIVITY_RETENTION_SECONDS)).toBe(0)
    expect(await stores.outbox.activity('activity')).toHaveLength(1)
    await stores.outbox.sweepActivity(day + DAY + ACTIVITY_RETENTION_SECONDS)
    expect(await partitions('webhook_activity')).not.toContain(`webhook_activity_p${day}`)
    expect(await stores.outbox.activity('activity')).toEqual([])
  })

  it('leaves a drop that would wait behind an open transaction to the next sweep', async () => {
    const start = T + 20 * DAY
    await stores.sweep(start)
    await stores.outbox.enqueue(
      outboxEntry('held', { id: 'held', createdAt: start, nextAttemptAt: start, deadlineAt: start + HOUR }),
    )
    const [held] = (await stores.outbox.lease(start, 10, 30)).filter((item) => item.id === 'held')
    await stores.outbox.record('held', held!.fence, { kind: 'delivered', httpStatus: 200 }, start + 1)
    const reader = new pg.Client({ connectionString: url })
    await reader.connect()
    try {
      // A long transaction that read the outbox holds a lock on it until it ends.
      await reader.query('BEGIN')
      await reader.query(`SELECT count(*) FROM "${schema}".outbox WHERE destination = 'held'`)
      // The sweep resolves while the transaction is open (its drop gave up on the lock), and a writer that came
      // while the drop was waiting went on.
      await Promise.all([
        stores.sweep(start + 6 * HOUR),
        stores.outbox.enqueue(
          outboxEntry('held', {
            id: 'meanwhile',
            createdAt: start,
            nextAttemptAt: start,
            deadlineAt: start + 7 * HOUR,
          }),
        ),
      ])
      expect(await partitions('outbox')).toContain(`outbox_p${start}`)
      await reader.query('COMMIT')
    } finally {
      await reader.end()
    }
    await stores.sweep(start + 6 * HOUR)
    expect(await partitions('outbox')).not.toContain(`outbox_p${start}`)
    expect((await stores.outbox.pending('held')).map((item) => item.id)).toEqual(['meanwhile'])
  })

  it('drops a table detached by a run that stopped before dropping it', async () => {
    const start = T + 60 * DAY
    await stores.sweep(start)
    // What a process stopped between the detach and the drop leaves behind.
    await queryOnce(url!, `ALTER TABLE "${schema}".outbox DETACH PARTITION "${schema}"."outbox_p${start}"`)
    expect(
      await queryOnce(url!, `SELECT to_regclass('"${schema}"."outbox_p${start}"')::text AS left`),
    ).toEqual([{ left: `${schema}.outbox_p${start}` }])
    await stores.sweep(start + 6 * HOUR)
    expect(await partitions('outbox')).toContain(`outbox_p${start + 6 * HOUR}`)
    expect(
      await queryOnce(url!, `SELECT to_regclass('"${schema}"."outbox_p${start}"')::text AS left`),
    ).toEqual([{ left: null }])
  })

  it('lets several processes sweep at once: each partition dropped once, every sweep resolves', async () => {
    const start = T + 40 * DAY
    await stores.sweep(start)
    for (let index = 0; index < 20; index += 1) {
      const id = `race-${index}`
      await stores.outbox.enqueue(
        outboxEntry('race', { id, createdAt: start, nextAttemptAt: start, deadlineAt: start + index * 60 }),
      )
    }
    for (const item of await stores.outbox.lease(start, 100, 30))
      if (item.destination === 'race')
        await stores.outbox.record(item.id, item.fence, { kind: 'delivered', httpStatus: 200 }, start + 1)
    const handles = [stores, ...others]
    await Promise.all(handles.map((handle) => handle.sweep(start + 6 * HOUR)))
    // A sweep that found another one maintaining left the work to it; one more settles any deferral.
    await stores.sweep(start + 6 * HOUR)
    expect(await partitions('outbox')).not.toContain(`outbox_p${start}`)
    expect(await queryOnce(url!, `SELECT id FROM "${schema}".outbox WHERE destination = 'race'`)).toEqual([])
  })
})
