/** The sales agent's storage on one SQLite file (WAL; one writer at a time, so compare-and-set is exact). */
import { migrateSqlite, openSqliteStores } from '@adwire/store-sqlite'
import { DUE_RULES, dueOf } from './due.js'
import {
  DUE_MIGRATION,
  MIGRATIONS,
  pruneField,
  type RecordStore,
  type Storage,
  toRecord,
  type RecordRow,
} from './types.js'

type Row = RecordRow

/**
 * @example
 * const storage = openSqliteStorage('./data/sales-agent.sqlite')
 */
export function openSqliteStorage(path: string): Storage {
  const stores = openSqliteStores({ path })
  const db = stores.database
  try {
    // The version table is read inside the write lock: two processes opening one file do not both migrate.
    migrateSqlite(db, () => {
      db.exec('CREATE TABLE IF NOT EXISTS sales_agent_migrations (version INTEGER PRIMARY KEY)')
      const done = new Set(
        (db.prepare('SELECT version FROM sales_agent_migrations').all() as { version: number }[]).map(
          (row) => row.version,
        ),
      )
      MIGRATIONS.forEach((migration, version) => {
        if (done.has(version)) return
        for (const statement of migration((name) => name, 'sqlite')) db.exec(statement)
        if (version === DUE_MIGRATION) backfillDue(db)
        db.prepare('INSERT INTO sales_agent_migrations (version) VALUES (?)').run(version)
      })
    })
  } catch (error) {
    stores.close()
    throw error
  }
  const selectSetting = db.prepare('SELECT value FROM sales_agent_settings WHERE name = ?')
  const insertSetting = db.prepare(
    'INSERT INTO sales_agent_settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING',
  )
  const read = (name: string) => (selectSetting.get(name) as { value: string } | undefined)?.value
  const columns = 'seq, kind, id, owner, revision, body'
  const get = db.prepare(`SELECT ${columns} FROM sales_records WHERE kind = ? AND id = ?`)
  const insert = db.prepare(
    `INSERT INTO sales_records (kind, id, owner, revision, body, updated_at, due_at) VALUES (?, ?, ?, 1, ?, ?, ?)
     ON CONFLICT (kind, id) DO NOTHING`,
  )
  const put = db.prepare(
    `INSERT INTO sales_records (kind, id, owner, revision, body, updated_at, due_at) VALUES (?, ?, ?, 1, ?, ?, ?)
     ON CONFLICT (kind, id) DO UPDATE SET owner = excluded.owner, body = excluded.body,
     revision = sales_records.revision + 1, updated_at = excluded.updated_at, due_at = excluded.due_at`,
  )
  const update = db.prepare(
    `UPDATE sales_records SET body = ?, revision = revision + 1, updated_at = ?, due_at = ?
     WHERE kind = ? AND id = ? AND revision = ?`,
  )
  const due = db.prepare(
    `SELECT ${columns} FROM sales_records WHERE kind = ? AND due_at <= ? AND seq > ? ORDER BY seq LIMIT ?`,
  )
  const remove = db.prepare('DELETE FROM sales_records WHERE kind = ? AND id = ?')
  // Every statement goes through the stores' gate: while another caller's storage.transaction is open it runs
  // right after that one ends (it would join it otherwise).
  const exec = <T>(work: () => T) => stores.exec(work)
  const committed = new Set<() => void>()
  const records: RecordStore = {
    get: <T>(kind: string, id: string) =>
      exec(() => {
        const row = get.get(kind, id) as Row | undefined
        return row ? toRecord<T>(row) : undefined
      }),
    insert: (kind, id, owner, body) =>
      exec(
        () => insert.run(kind, id, owner, JSON.stringify(body), Date.now(), dueOf(kind, body)).changes === 1,
      ),
    put: (kind, id, owner, body) =>
      exec(() => void put.run(kind, id, owner, JSON.stringify(body), Date.now(), dueOf(kind, body))),
    update: (kind, id, revision, body) =>
      exec(
        () =>
          update.run(JSON.stringify(body), Date.now(), dueOf(kind, body), kind, id, revision).changes === 1,
      ),
    listDue: <T>(
      kind: string,
      at: number,
      options: { readonly afterSeq?: number; readonly limit?: number } = {},
    ) =>
      exec(() =>
        (due.all(kind, at, options.afterSeq ?? 0, options.limit ?? 1_000_000) as Row[]).map((row) =>
          toRecord<T>(row),
        ),
      ),
    list: <T>(
      kind: string,
      options: { readonly owner?: string; readonly afterSeq?: number; readonly limit?: number } = {},
    ) =>
      exec(() => {
        const rows = db
          .prepare(
            `SELECT ${columns} FROM sales_records WHERE kind = ? AND seq > ?
             ${options.owner !== undefined ? 'AND owner = ?' : ''} ORDER BY seq LIMIT ?`,
          )
          .all(
            kind,
            options.afterSeq ?? 0,
            ...(options.owner !== undefined ? [options.owner] : []),
            options.limit ?? 1_000_000,
          ) as Row[]
        return rows.map((row) => toRecord<T>(row))
      }),
    delete: (kind, id) => exec(() => void remove.run(kind, id)),
    async transaction(body) {
      const value = await stores.transaction(body)
      for (const listener of committed) listener()
      return value
    },
    prune: (kind, rule) =>
      exec(() => {
        const path = `$.${pruneField(rule.field)}`
        const deleted =
          'below' in rule
            ? db
                .prepare('DELETE FROM sales_records WHERE kind = ? AND json_extract(body, ?) < ?')
                .run(kind, path, rule.below)
            : db
                .prepare('DELETE FROM sales_records WHERE kind = ? AND json_extract(body, ?) = 1')
                .run(kind, path)
        return deleted.changes
      }),
  }
  return {
    kind: 'sqlite',
    claims: stores.claims,
    outbox: stores.outbox,
    records,
    transaction: records.transaction,
    onCommit: (listener) => void committed.add(listener),
    getSetting: (name) => exec(() => read(name)),
    putSettingIfAbsent: (name, value) =>
      exec(() => {
        insertSetting.run(name, value)
        return read(name)!
      }),
    ping: () => exec(() => void db.prepare('SELECT 1').get()),
    async sweep(now) {
      await stores.sweep(now)
    },
    async close() {
      stores.close()
    },
  }
}

/** Computes `due_at` of the rows stored before the column existed (once, inside the migration). */
function backfillDue(db: ReturnType<typeof openSqliteStores>['database']): void {
  const kinds = Object.keys(DUE_RULES)
  const rows = db
    .prepare(`SELECT seq, kind, body FROM sales_records WHERE kind IN (${kinds.map(() => '?').join(', ')})`)
    .all(...kinds) as { seq: number; kind: string; body: string }[]
  const set = db.prepare('UPDATE sales_records SET due_at = ? WHERE seq = ?')
  for (const row of rows) set.run(dueOf(row.kind, JSON.parse(row.body) as object), row.seq)
}
