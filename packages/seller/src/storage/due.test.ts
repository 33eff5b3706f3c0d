/**
 * The periodic work reads due records through the `due_at` index: on a real SQLite file and a real PostgreSQL
 * schema, `listDue` returns exactly the records due (work past its time and lease, schedules with a report or a
 * window due, buys not terminal), follows every kind of write, and a database made before the column existed
 * gets its rows' due times on upgrade. The query plan uses the index.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqliteStores } from '@adwire/store-sqlite'
import {
  dropSchema,
  freshSchemaName,
  queryOnce,
  resolveTestPostgresUrl,
} from '@adwire/vitest-config/postgres'
import { afterAll, describe, expect, it } from 'vitest'
import { openPostgresStorage } from './postgres.js'
import { openSqliteStorage } from './sqlite.js'
import { MIGRATIONS, type Storage } from './types.js'

const dir = mkdtempSync(join(tmpdir(), 'adwire-seller-due-'))
const url = await resolveTestPostgresUrl()
const schemas: string[] = []
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  if (url) for (const schema of schemas) await dropSchema(url, schema)
})

const ids = (rows: { id: string }[]) => rows.map((row) => row.id).sort()

/** Stores one record of each case at t = 1000 and checks what is due then, and after each kind of write. */
async function checkDue(storage: Storage): Promise<void> {
  const { records } = storage
  await records.put('due_work', 'past', 'o', { due_at: 900 })
  await records.put('due_work', 'future', 'o', { due_at: 2000 })
  await records.insert('due_work', 'leased', 'o', { due_at: 900, lease_until: 1500 })
  await records.put('report_schedule', 'next', 'o', { channel: 'webhook', next_at: 950 })
  await records.put('report_schedule', 'push', 'o', { channel: 'push', next_at: 950, mature_at: 5000 })
  await records.put('report_schedule', 'closed', 'o', { channel: 'webhook', next_at: 10, closed: true })
  await records.put('media_buy', 'live', 'o', { status: 'active' })
  await records.put('media_buy', 'done', 'o', { status: 'completed' })
  await records.put('account', 'other-kind', 'o', { due_at: 1 })
  expect(ids(await records.listDue('due_work', 1000))).toEqual(['past'])
  expect(ids(await records.listDue('report_schedule', 1000))).toEqual(['next'])
  expect(ids(await records.listDue('report_schedule', 5000))).toEqual(['next', 'push'])
  expect(ids(await records.listDue('media_buy', 1000))).toEqual(['live'])
  expect(await records.listDue('account', 1000)).toEqual([])

  const leased = (await records.get('due_work', 'leased'))!
  expect(await records.update('due_work', 'leased', leased.revision, { due_at: 900 })).toBe(true)
  const live = (await records.get('media_buy', 'live'))!
  expect(await records.update('media_buy', 'live', live.revision, { status: 'canceled' })).toBe(true)
  await records.put('report_schedule', 'next', 'o', { channel: 'webhook', next_at: 950, closed: true })
  expect(ids(await records.listDue('due_work', 1000))).toEqual(['leased', 'past'])
  expect(await records.listDue('media_buy', 1000)).toEqual([])
  expect(await records.listDue('report_schedule', 1000)).toEqual([])
  // Paged in insertion order.
  const [first] = await records.listDue('due_work', 1000, { limit: 1 })
  expect(first?.id).toBe('past')
  expect(ids(await records.listDue('due_work', 1000, { afterSeq: first!.seq }))).toEqual(['leased'])
}

describe('listDue on SQLite', () => {
  it('returns the due records of a kind and follows every write', async () => {
    const storage = openSqliteStorage(join(dir, 'due.sqlite'))
    try {
      await checkDue(storage)
    } finally {
      await storage.close()
    }
  })

  it('reads through the due index, and fills due_at of rows stored before the column existed', async () => {
    const path = join(dir, 'old.sqlite')
    const stores = openSqliteStores({ path })
    const old = stores.database
    old.exec('CREATE TABLE sales_agent_migrations (version INTEGER PRIMARY KEY)')
    for (const statement of MIGRATIONS[0]!((name) => name, 'sqlite')) old.exec(statement)
    old.prepare('INSERT INTO sales_agent_migrations (version) VALUES (0)').run()
    const insert = old.prepare(
      `INSERT INTO sales_records (kind, id, owner, revision, body, updated_at) VALUES (?, ?, 'o', 1, ?, 0)`,
    )
    insert.run('due_work', 'old-due', JSON.stringify({ due_at: 10 }))
    insert.run('media_buy', 'old-live', JSON.stringify({ status: 'paused' }))
    insert.run('media_buy', 'old-done', JSON.stringify({ status: 'rejected' }))
    stores.close()

    const storage = openSqliteStorage(path)
    try {
      expect(ids(await storage.records.listDue('due_work', 100))).toEqual(['old-due'])
      expect(ids(await storage.records.listDue('media_buy', 100))).toEqual(['old-live'])
      const steps = storage.kind === 'sqlite' ? explain(path) : []
      expect(steps.join(' | ')).toMatch(/sales_records_due/)
    } finally {
      await storage.close()
    }
  })
})

/** The query plan of the due read, as SQLite describes it. */
function explain(path: string): string[] {
  const stores = openSqliteStores({ path })
  try {
    const steps = stores.database
      .prepare(
        `EXPLAIN QUERY PLAN SELECT seq FROM sales_records WHERE kind = ? AND due_at <= ? AND seq > ? ORDER BY seq LIMIT ?`,
      )
      .all('due_work', 100, 0, 500) as { detail: string }[]
    return steps.map((step) => step.detail)
  } finally {
    stores.close()
  }
}

describe.skipIf(!url)('listDue on PostgreSQL', () => {
  it('returns the due records of a kind and follows every write', async () => {
    const schema = freshSchemaName('seller_due')
    schemas.push(schema)
    const storage = await openPostgresStorage(url!, schema)
    try {
      await checkDue(storage)
    } finally {
      await storage.close()
    }
  })

  it('fills due_at of rows stored before the column existed', async () => {
    const schema = freshSchemaName('seller_due_old')
    schemas.push(schema)
    const t = (name: string) => `"${schema}".${name}`
    await queryOnce(url!, `CREATE SCHEMA "${schema}"`)
    await queryOnce(url!, `CREATE TABLE ${t('sales_agent_migrations')} (version INTEGER PRIMARY KEY)`)
    for (const statement of MIGRATIONS[0]!(t, 'postgres')) await queryOnce(url!, statement)
    await queryOnce(url!, `INSERT INTO ${t('sales_agent_migrations')} (version) VALUES (0)`)
    await queryOnce(
      url!,
      `INSERT INTO ${t('sales_records')} (kind, id, owner, revision, body, updated_at) VALUES
       ('report_schedule', 'old-schedule', 'o', 1, '{"channel":"webhook","next_at":50}', 0),
       ('media_buy', 'old-done', 'o', 1, '{"status":"completed"}', 0)`,
    )
    const storage = await openPostgresStorage(url!, schema)
    try {
      expect(ids(await storage.records.listDue('report_schedule', 100))).toEqual(['old-schedule'])
      expect(await storage.records.listDue('media_buy', 100)).toEqual([])
    } finally {
      await storage.close()
    }
  })
})
