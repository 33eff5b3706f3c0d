/**
 * The sales agent's storage on one PostgreSQL schema, shared by every instance: migrations run once under an
 * advisory lock; compare-and-set updates make concurrent writers of one buy safe.
 */
import { migratePostgres, openPostgresStores } from '@adwire/store-postgres'
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
 * const storage = await openPostgresStorage('postgres://postgres@127.0.0.1:5432/test', 'adwire_sales_agent')
 */
export async function openPostgresStorage(connectionString: string, schema: string): Promise<Storage> {
  const stores = await openPostgresStores({ connectionString, schema })
  const t = (name: string) => `"${schema}".${name}`
  try {
    await migratePostgres(stores.pool, `adwire_sales_agent:${schema}`, async (client) => {
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${t('sales_agent_migrations')} (version INTEGER PRIMARY KEY)`,
      )
      const done = new Set(
        (
          await client.query<{ version: number }>(`SELECT version FROM ${t('sales_agent_migrations')}`)
        ).rows.map((row) => row.version),
      )
      for (const [version, migration] of MIGRATIONS.entries()) {
        if (done.has(version)) continue
        for (const statement of migration(t, 'postgres')) await client.query(statement)
        if (version === DUE_MIGRATION) await backfillDue(client, t('sales_records'))
        await client.query(`INSERT INTO ${t('sales_agent_migrations')} (version) VALUES ($1)`, [version])
      }
    })
  } catch (error) {
    await stores.close()
    throw error
  }
  const pool = stores.pool
  const settings = t('sales_agent_settings')
  const table = t('sales_records')
  const columns = 'seq, kind, id, owner, revision, body'
  const read = async (name: string) =>
    (await pool.query<{ value: string }>(`SELECT value FROM ${settings} WHERE name = $1`, [name])).rows[0]
      ?.value
  // Inside storage.transaction the statements go to its connection, so that they commit with its pushes.
  const db = () => stores.connection()
  const committed = new Set<() => void>()
  const records: RecordStore = {
    async get<T>(kind: string, id: string) {
      const found = await db().query<Row>(`SELECT ${columns} FROM ${table} WHERE kind = $1 AND id = $2`, [
        kind,
        id,
      ])
      return found.rows[0] ? toRecord<T>(found.rows[0]) : undefined
    },
    async insert(kind, id, owner, body) {
      const inserted = await db().query(
        `INSERT INTO ${table} (kind, id, owner, revision, body, updated_at, due_at)
         VALUES ($1, $2, $3, 1, $4, $5, $6) ON CONFLICT (kind, id) DO NOTHING`,
        [kind, id, owner, JSON.stringify(body), Date.now(), dueOf(kind, body)],
      )
      return inserted.rowCount === 1
    },
    async put(kind, id, owner, body) {
      await db().query(
        `INSERT INTO ${table} AS r (kind, id, owner, revision, body, updated_at, due_at)
         VALUES ($1, $2, $3, 1, $4, $5, $6)
         ON CONFLICT (kind, id) DO UPDATE SET owner = EXCLUDED.owner, body = EXCLUDED.body,
         revision = r.revision + 1, updated_at = EXCLUDED.updated_at, due_at = EXCLUDED.due_at`,
        [kind, id, owner, JSON.stringify(body), Date.now(), dueOf(kind, body)],
      )
    },
    async update(kind, id, revision, body) {
      const updated = await db().query(
        `UPDATE ${table} SET body = $1, revision = revision + 1, updated_at = $2, due_at = $6
         WHERE kind = $3 AND id = $4 AND revision = $5`,
        [JSON.stringify(body), Date.now(), kind, id, revision, dueOf(kind, body)],
      )
      return updated.rowCount === 1
    },
    async list<T>(
      kind: string,
      options: { readonly owner?: string; readonly afterSeq?: number; readonly limit?: number } = {},
    ) {
      const params: unknown[] = [kind, options.afterSeq ?? 0, options.limit ?? 1_000_000]
      if (options.owner !== undefined) params.push(options.owner)
      const found = await db().query<Row>(
        `SELECT ${columns} FROM ${table} WHERE kind = $1 AND seq > $2
         ${options.owner !== undefined ? 'AND owner = $4' : ''} ORDER BY seq LIMIT $3`,
        params,
      )
      return found.rows.map((row) => toRecord<T>(row))
    },
    async listDue<T>(
      kind: string,
      at: number,
      options: { readonly afterSeq?: number; readonly limit?: number } = {},
    ) {
      const found = await db().query<Row>(
        `SELECT ${columns} FROM ${table} WHERE kind = $1 AND due_at <= $2 AND seq > $3 ORDER BY seq LIMIT $4`,
        [kind, at, options.afterSeq ?? 0, options.limit ?? 1_000_000],
      )
      return found.rows.map((row) => toRecord<T>(row))
    },
    async delete(kind, id) {
      await db().query(`DELETE FROM ${table} WHERE kind = $1 AND id = $2`, [kind, id])
    },
    async transaction(body) {
      const value = await stores.transaction(() => body())
      for (const listener of committed) listener()
      return value
    },
    async prune(kind, rule) {
      const field = pruneField(rule.field)
      const deleted =
        'below' in rule
          ? await db().query(
              `DELETE FROM ${table} WHERE kind = $1 AND (body::jsonb ->> '${field}')::float8 < $2`,
              [kind, rule.below],
            )
          : await db().query(
              `DELETE FROM ${table} WHERE kind = $1 AND (body::jsonb ->> '${field}') = 'true'`,
              [kind],
            )
      return deleted.rowCount ?? 0
    },
  }
  return {
    kind: 'postgres',
    claims: stores.claims,
    outbox: stores.outbox,
    records,
    getSetting: read,
    transaction: records.transaction,
    onCommit: (listener) => void committed.add(listener),
    async putSettingIfAbsent(name, value) {
      await pool.query(
        `INSERT INTO ${settings} (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
        [name, value],
      )
      return (await read(name))!
    },
    async ping() {
      await pool.query('SELECT 1')
    },
    async sweep(now) {
      await stores.sweep(now)
    },
    close: () => stores.close(),
  }
}

/** Computes `due_at` of the rows stored before the column existed (once, inside the migration). */
async function backfillDue(
  client: Parameters<Parameters<typeof migratePostgres>[2]>[0],
  table: string,
): Promise<void> {
  const { rows } = await client.query<{ seq: string; kind: string; body: string }>(
    `SELECT seq, kind, body FROM ${table} WHERE kind = ANY($1::text[])`,
    [Object.keys(DUE_RULES)],
  )
  for (const row of rows)
    await client.query(`UPDATE ${table} SET due_at = $1 WHERE seq = $2`, [
      dueOf(row.kind, JSON.parse(row.body) as object),
      row.seq,
    ])
}
