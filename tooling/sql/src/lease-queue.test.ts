/**
 * The lease queue on real SQLite files and real PostgreSQL: claimers racing on separate connections each get
 * every job once, a lost lease cannot finish a job, retries wait their back-off, and a queue with a leased
 * state recovers what a dead worker left.
 */
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, describe, expect, it } from 'vitest'
import { backoffSeconds } from './backoff.js'
import type { SqlDriver } from './driver.js'
import { SqlError } from './errors.js'
import { leaseQueue, type LeaseQueueSpec } from './lease-queue.js'
import { postgresSchema, sqliteFile } from './test-databases.js'

const postgresUrl = await resolveTestPostgresUrl()

/** Jobs with a fence column, retried with back-off: the forwarder's shape. */
const fenced = (table: string): LeaseQueueSpec => ({
  table,
  key: 'id',
  state: 'state',
  attempts: 'attempts',
  leaseUntil: 'lease_until',
  fence: 'fence',
  dueAt: 'due_at',
  error: 'error',
  states: { ready: 'pending', done: 'done' },
  order: 'due_at, id',
})

/** Jobs whose attempt counter is the fence and whose claim marks them running: the compliance runs' shape. */
const counted = (table: string): LeaseQueueSpec => ({
  table,
  key: 'id',
  state: 'state',
  attempts: 'attempts',
  leaseUntil: 'lease_until',
  states: { ready: 'queued', leased: 'running', done: 'completed' },
  order: 'created, id',
})

async function createJobs(db: SqlDriver, table: string, count: number): Promise<void> {
  await db.run(`CREATE TABLE ${table} (
    id TEXT PRIMARY KEY, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, lease_until REAL,
    fence TEXT, due_at REAL, error TEXT, created INTEGER NOT NULL, note TEXT)`)
  for (let index = 0; index < count; index++)
    await db.run(`INSERT INTO ${table} (id, state, due_at, created) VALUES (?, 'pending', 0, ?)`, [
      `job_${String(index).padStart(4, '0')}`,
      index,
    ])
}

function contract(name: string, open: () => SqlDriver) {
  describe(`the lease queue on ${name}`, () => {
    it('hands every job to exactly one of several racing claimers, each done once', async () => {
      const table = `race_${crypto.randomUUID().slice(0, 8)}`
      const setup = open()
      await createJobs(setup, table, 120)
      const claimers = Array.from({ length: 4 }, open)
      try {
        const claimed: string[] = []
        let finished = 0
        await Promise.all(
          claimers.map(async (db) => {
            const queue = leaseQueue(db, fenced(table))
            for (;;) {
              const jobs = await queue.claim<{ id: string }>({ now: 100, leaseUntil: 160, limit: 7 })
              if (jobs.length === 0) return
              for (const { row, fence } of jobs) {
                claimed.push(row.id)
                if (await queue.done(row.id, fence)) finished++
              }
            }
          }),
        )
        expect(claimed).toHaveLength(120)
        expect(new Set(claimed).size).toBe(120)
        expect(finished).toBe(120)
        expect(
          await setup.all(
            `SELECT state, attempts, CAST(COUNT(*) AS INTEGER) AS n FROM ${table} GROUP BY state, attempts`,
          ),
        ).toEqual([{ state: 'done', attempts: 1, n: 120 }])
      } finally {
        for (const db of [setup, ...claimers]) await db.close()
      }
    })

    it('retries after the back-off, and a lost lease finishes nothing', async () => {
      const table = `retry_${crypto.randomUUID().slice(0, 8)}`
      const db = open()
      try {
        await createJobs(db, table, 1)
        const queue = leaseQueue(db, fenced(table))
        const [first] = await queue.claim<{ id: string; attempts: number }>({
          now: 10,
          leaseUntil: 40,
          limit: 5,
        })
        expect(first!.row).toMatchObject({ id: 'job_0000', attempts: 0 })
        // Leased: nobody else gets it until the lease ends.
        expect(await queue.claim({ now: 39, leaseUntil: 70, limit: 5 })).toEqual([])
        expect(await queue.renew('job_0000', first!.fence, 50)).toBe(true)
        expect(await queue.claim({ now: 45, leaseUntil: 70, limit: 5 })).toEqual([])
        // The lease ran out: another worker takes the job, and the first one's fence is stale.
        const [second] = await queue.claim<{ id: string }>({ now: 50, leaseUntil: 80, limit: 5 })
        expect(second!.fence).not.toBe(first!.fence)
        expect(await queue.done('job_0000', first!.fence)).toBe(false)
        expect(await queue.renew('job_0000', first!.fence, 99)).toBe(false)

        const delay = backoffSeconds(0, { baseSeconds: 10, capSeconds: 300, random: () => 0.5 })
        expect(delay).toBe(10)
        expect(
          await queue.retry('job_0000', second!.fence, { dueAt: 60 + delay, error: 'answered 503' }),
        ).toBe(true)
        expect(await db.one(`SELECT state, attempts, error, lease_until FROM ${table}`)).toEqual({
          state: 'pending',
          attempts: 1,
          error: 'answered 503',
          lease_until: null,
        })
        expect(await queue.claim({ now: 69, leaseUntil: 99, limit: 5 })).toEqual([])
        const [third] = await queue.claim<{ attempts: number }>({ now: 70, leaseUntil: 99, limit: 5 })
        expect(third!.row.attempts).toBe(1)
        // Released unattempted: claimable at once, no attempt counted.
        expect(await queue.release('job_0000', third!.fence)).toBe(true)
        const [fourth] = await queue.claim<{ id: string }>({ now: 71, leaseUntil: 99, limit: 5 })
        expect(await queue.done('job_0000', fourth!.fence, { set: { note: 'ok' } })).toBe(true)
        expect(await db.one(`SELECT state, attempts, error, note FROM ${table}`)).toEqual({
          state: 'done',
          attempts: 2,
          error: null,
          note: 'ok',
        })
      } finally {
        await db.close()
      }
    })

    it('finishes many jobs in one statement, each only while its lease holds', async () => {
      const table = `many_${crypto.randomUUID().slice(0, 8)}`
      const db = open()
      try {
        await createJobs(db, table, 5)
        const queue = leaseQueue(db, fenced(table))
        const leased = (await queue.claim<{ id: string }>({ now: 10, leaseUntil: 20, limit: 4 })).sort(
          (a, b) => a.row.id.localeCompare(b.row.id),
        )
        expect(leased.map(({ row }) => row.id)).toEqual(['job_0000', 'job_0001', 'job_0002', 'job_0003'])
        // job_0000's lease runs out and another worker takes it: its old fence no longer finishes it.
        const [stolen] = await queue.claim<{ id: string }>({ now: 21, leaseUntil: 40, limit: 1 })
        expect(stolen!.row.id).toBe('job_0000')
        const jobs = [
          ...leased.map(({ row, fence }) => ({ key: row.id, fence })),
          { key: 'job_0004', fence: 'never-leased' },
        ]
        expect(await queue.doneMany(jobs, { set: { note: 'batch' } })).toEqual([
          false,
          true,
          true,
          true,
          false,
        ])
        expect(await queue.doneMany([])).toEqual([])
        expect(await db.all(`SELECT id, state, note FROM ${table} ORDER BY id`)).toEqual([
          { id: 'job_0000', state: 'pending', note: null },
          { id: 'job_0001', state: 'done', note: 'batch' },
          { id: 'job_0002', state: 'done', note: 'batch' },
          { id: 'job_0003', state: 'done', note: 'batch' },
          { id: 'job_0004', state: 'pending', note: null },
        ])
        expect(await queue.done('job_0000', stolen!.fence)).toBe(true)
      } finally {
        await db.close()
      }
    })

    it('counts attempts as the fence, and recovers jobs whose worker stopped renewing', async () => {
      const table = `runs_${crypto.randomUUID().slice(0, 8)}`
      const db = open()
      try {
        await createJobs(db, table, 3)
        await db.run(`UPDATE ${table} SET state = 'queued'`)
        const queue = leaseQueue(db, counted(table))
        const claimed = await queue.claim<{ id: string; state: string; note: string }>({
          now: 0,
          leaseUntil: 10,
          limit: 2,
          set: { note: { sql: 'COALESCE(note, ?)', params: ['started'] } },
        })
        expect(claimed.map(({ row, fence }) => [row.id, row.state, row.note, fence])).toEqual([
          ['job_0000', 'running', 'started', 1],
          ['job_0001', 'running', 'started', 1],
        ])
        // A running job is not claimed again, even past its lease: recovery brings it back.
        expect(
          (await queue.claim<{ id: string }>({ now: 50, leaseUntil: 60, limit: 5 })).map((job) => job.row.id),
        ).toEqual(['job_0002'])
        expect(await queue.release('job_0002', 1, { set: { note: 'released' } })).toBe(true)
        expect(await db.one(`SELECT state, attempts, note FROM ${table} WHERE id = 'job_0002'`)).toEqual({
          state: 'queued',
          attempts: 0,
          note: 'released',
        })

        expect(
          await queue.recover({ now: 20, maxAttempts: 2, skip: ['job_0001'], failed: { state: 'failed' } }),
        ).toEqual({ requeued: ['job_0000'], failed: [] })
        // Claimed again (attempt 2), the earlier claim's fence is stale; it expires once more and fails.
        const again = await queue.claim<{ id: string }>({ now: 21, leaseUntil: 30, limit: 1 })
        expect(again.map(({ row, fence }) => [row.id, fence])).toEqual([['job_0000', 2]])
        expect(await queue.on(db).done('job_0000', 1)).toBe(false)
        expect(
          await queue.recover({
            now: 40,
            maxAttempts: 2,
            skip: ['job_0001'],
            failed: { state: 'failed', set: { note: 'gave up' } },
          }),
        ).toEqual({ requeued: [], failed: ['job_0000'] })
        // Finished inside a transaction with the job's results.
        const finished = await db.transaction(async (tx) => {
          const owned = await queue
            .on(tx)
            .done('job_0001', 1, { state: 'completed', set: { note: 'result' } })
          if (owned) await tx.run(`INSERT INTO ${table} (id, state, created) VALUES ('result_1', 'none', 99)`)
          return owned
        })
        expect(finished).toBe(true)
        expect(await db.all(`SELECT id, state, note FROM ${table} ORDER BY id`)).toEqual([
          { id: 'job_0000', state: 'failed', note: 'gave up' },
          { id: 'job_0001', state: 'completed', note: 'result' },
          { id: 'job_0002', state: 'queued', note: 'released' },
          { id: 'result_1', state: 'none', note: null },
        ])
      } finally {
        await db.close()
      }
    })

    it("claims from several ready states, a null due time as due at once, and recovers by each job's own limit", async () => {
      const table = `crawl_${crypto.randomUUID().slice(0, 8)}`
      const db = open()
      try {
        await db.run(`CREATE TABLE ${table} (
          id TEXT PRIMARY KEY, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL,
          lease_until REAL, due_at REAL, error TEXT, created INTEGER NOT NULL)`)
        const rows: [string, string, number | null, number][] = [
          ['a_queued', 'queued', null, 3],
          ['b_retry_due', 'retrying', 5, 3],
          ['c_retry_later', 'retrying', 500, 3],
          ['d_done', 'completed', null, 3],
          ['e_once', 'queued', null, 1],
        ]
        for (const [index, [id, state, due, max]] of rows.entries())
          await db.run(
            `INSERT INTO ${table} (id, state, due_at, max_attempts, created) VALUES (?, ?, ?, ?, ?)`,
            [id, state, due, max, index],
          )
        const queue = leaseQueue(db, {
          ...counted(table),
          dueAt: 'due_at',
          dueWhenNull: true,
          error: 'error',
          states: { ready: ['queued', 'retrying'], leased: 'running', done: 'completed' },
        })
        const claimed = await queue.claim<{ id: string }>({ now: 10, leaseUntil: 20, limit: 10 })
        expect(claimed.map(({ row }) => row.id)).toEqual(['a_queued', 'b_retry_due', 'e_once'])
        expect(
          await queue.retry('a_queued', 1, { dueAt: 100, error: 'fetch_failed', state: 'retrying' }),
        ).toBe(true)
        await expect(queue.retry('b_retry_due', 1, { dueAt: 100, state: 'completed' })).rejects.toThrow(
          SqlError,
        )
        // b and e stopped renewing: b has attempts left, e (one attempt allowed) fails.
        expect(
          await queue.recover({
            now: 30,
            maxAttempts: { column: 'max_attempts' },
            failed: { state: 'failed' },
          }),
        ).toEqual({ requeued: ['b_retry_due'], failed: ['e_once'] })
        expect(await db.all(`SELECT id, state, due_at, error FROM ${table} ORDER BY id`)).toEqual([
          { id: 'a_queued', state: 'retrying', due_at: 100, error: 'fetch_failed' },
          { id: 'b_retry_due', state: 'queued', due_at: 5, error: null },
          { id: 'c_retry_later', state: 'retrying', due_at: 500, error: null },
          { id: 'd_done', state: 'completed', due_at: null, error: null },
          { id: 'e_once', state: 'failed', due_at: null, error: null },
        ])
      } finally {
        await db.close()
      }
    })

    it('refuses names that are not SQL identifiers', () => {
      const db = open()
      expect(() => leaseQueue(db, { ...fenced('jobs; DROP TABLE x'), key: 'id' })).toThrow(SqlError)
      expect(() => leaseQueue(db, { ...fenced('jobs'), returning: 'id, (SELECT 1)' })).toThrow(
        expect.objectContaining({ code: 'sql_invalid_queue' }),
      )
      expect(() => leaseQueue(db, { ...counted('jobs'), returning: 'id, state' })).toThrow(
        expect.objectContaining({ code: 'sql_invalid_queue' }),
      )
      void db.close()
    })
  })
}

const sqlite = sqliteFile()
contract('SQLite', sqlite.open)

describe.skipIf(!postgresUrl)('PostgreSQL', async () => {
  const schema = postgresUrl ? await postgresSchema(postgresUrl) : undefined
  afterAll(() => schema?.drop())
  contract('PostgreSQL', () => schema!.open())
})
