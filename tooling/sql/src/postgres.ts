/**
 * The {@link SqlDriver} on a `pg` pool. Statements are written with `?` placeholders and rewritten to `$1…`
 * (statements never carry a literal `?`). Tables are named as the pool's connections see them: unqualified
 * under a `search_path`, or qualified by the caller.
 */
import type pg from 'pg'
import type { SqlDriver, SqlExecutor, SqlValue } from './driver.js'

/** `?` placeholders to `$1…`. */
const renumber = (sql: string): string => {
  let index = 0
  return sql.replace(/\?/g, () => `$${++index}`)
}

/**
 * Statements already rewritten: the same few run for every delivery. Long texts (multi-row statements built per
 * group) and texts beyond the bound are rewritten each time, not kept.
 */
const rewritten = new Map<string, string>()
const REWRITTEN_MAX = 512
const REWRITTEN_LENGTH = 4096

/** `?` placeholders to `$1…`, once per statement text. */
const numbered = (sql: string): string => {
  let text = rewritten.get(sql)
  if (text === undefined) {
    text = renumber(sql)
    if (rewritten.size < REWRITTEN_MAX && sql.length <= REWRITTEN_LENGTH) rewritten.set(sql, text)
  }
  return text
}

/**
 * The statements of {@link SqlExecutor} on one pool or connection: e.g. the client holding a transaction that
 * another library opened, so that the statements join it.
 *
 * @example
 * await stores.transaction(async (client) => {
 *   await postgresExecutor(client).run('INSERT INTO events (id) VALUES (?)', ['event_1'])
 * })
 */
export function postgresExecutor(target: pg.Pool | pg.PoolClient | pg.Client): SqlExecutor {
  return {
    dialect: 'postgres',
    async all<Row>(sql: string, params: readonly SqlValue[] = []) {
      return (await target.query({ text: numbered(sql), values: [...params] })).rows as Row[]
    },
    async tuples<Tuple extends readonly unknown[]>(sql: string, params: readonly SqlValue[] = []) {
      return (await target.query({ text: numbered(sql), values: [...params], rowMode: 'array' }))
        .rows as unknown as Tuple[]
    },
    async one<Row>(sql: string, params: readonly SqlValue[] = []) {
      return (await target.query({ text: numbered(sql), values: [...params] })).rows[0] as Row | undefined
    },
    async run(sql, params = []) {
      return (await target.query({ text: numbered(sql), values: [...params] })).rowCount ?? 0
    },
  }
}

/**
 * @example
 * const pool = new pg.Pool({ connectionString, options: '-c search_path=adwire_registry' })
 * const driver = postgresDriver(pool)
 * await driver.all('SELECT domain FROM registry_brands')
 * await driver.close() // ends the pool
 */
export function postgresDriver(pool: pg.Pool): SqlDriver {
  const executor = postgresExecutor(pool)
  let closed: Promise<void> | undefined
  return {
    ...executor,
    async transaction(work) {
      const client = await pool.connect()
      try {
        await client.query('BEGIN')
        const result = await work(postgresExecutor(client))
        await client.query('COMMIT')
        return result
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        throw error
      } finally {
        client.release()
      }
    },
    close() {
      closed ??= pool.end()
      return closed
    },
  }
}
