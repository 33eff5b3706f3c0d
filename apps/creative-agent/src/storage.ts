/**
 * Opens what the creative agent keeps: the @adwire/store-* stores (request idempotency claims and the webhook
 * outbox), a small settings table (the generated signing key and token hash) and the preview pages served at
 * /previews/{id}, on one SQLite file or one PostgreSQL schema, written once on the driver of @adwire/sql.
 */
import { migratePostgres, migrateSqlite } from '@adwire/service-kit'
import { postgresDriver, sqliteDriver, type SqlDriver } from '@adwire/sql'
import { openPostgresStores } from '@adwire/store-postgres'
import { openSqliteStores } from '@adwire/store-sqlite'
import type { ClaimStore, OutboxStore } from '@adwire/webhooks'
import type { DatabaseConfig } from './env.js'

const TABLE = 'creative_agent_settings'
const PREVIEWS = 'creative_agent_previews'
/** Preview rows per upsert statement (3 values each: within SQLite's 32,766 and PostgreSQL's 65,535). */
const PREVIEW_ROWS = 10_000

/**
 * How long an expired preview page is remembered (its row kept, the page emptied) so /previews/{id} answers 410
 * Gone rather than 404; {@link Storage.sweep} deletes it after that. Seconds.
 */
export const PREVIEW_TOMBSTONE_SECONDS = 86_400

/** A stored preview page: content-addressed `id`, its HTML (empty once expired and swept) and its expiry. */
export interface PreviewRow {
  readonly id: string
  readonly html: string
  readonly expiresAt: Date
}

/** Where preview pages are kept across restarts and instances (implemented by {@link Storage}). */
export interface PreviewPersistence {
  /**
   * Stores pages in one statement (one transaction on SQLite); an id already stored keeps the later expiry.
   * Rejects when the database does not take them.
   */
  putPreviews(pages: readonly PreviewRow[]): Promise<void>
  /** The stored page, live or expired (until swept), or undefined. */
  getPreview(id: string): Promise<PreviewRow | undefined>
}

/** The pages with one row per id, each with its latest expiry (an upsert must not touch one row twice). */
function latestPerId(pages: readonly PreviewRow[]): PreviewRow[] {
  const byId = new Map<string, PreviewRow>()
  for (const page of pages) {
    const seen = byId.get(page.id)
    if (!seen || seen.expiresAt < page.expiresAt) byId.set(page.id, page)
  }
  return [...byId.values()]
}

/** A row as read back: expiry stored as Unix milliseconds (a string from PostgreSQL's BIGINT). */
const toRow = (row: { id: string; html: string; expires_at: number | string }): PreviewRow => ({
  id: row.id,
  html: row.html,
  expiresAt: new Date(Number(row.expires_at)),
})

export interface Storage extends PreviewPersistence {
  readonly kind: DatabaseConfig['kind']
  readonly claims: ClaimStore
  readonly outbox: OutboxStore
  /** A stored setting, or undefined. */
  getSetting(name: string): Promise<string | undefined>
  /** Stores `value` unless the setting exists; resolves with the value that is stored now (first writer wins). */
  putSettingIfAbsent(name: string, value: string): Promise<string>
  /** Checks the database answers (for /health). */
  ping(): Promise<void>
  /**
   * At `now` (Unix seconds): deletes expired idempotency claims (and, on PostgreSQL, old outbox entries),
   * empties expired preview pages and deletes those expired more than {@link PREVIEW_TOMBSTONE_SECONDS} ago.
   */
  sweep(now: number): Promise<void>
  /** Closes the file or the pool. Idempotent. */
  close(): Promise<void>
}

/**
 * @example
 * const storage = await openStorage({ kind: 'sqlite', path: './data/creative-agent.sqlite' })
 * await storage.putSettingIfAbsent('greeting', 'hello') // 'hello'
 * await storage.close()
 */
export async function openStorage(config: DatabaseConfig): Promise<Storage> {
  const stores =
    config.kind === 'sqlite'
      ? openSqliteStores({ path: config.path })
      : await openPostgresStores({ connectionString: config.connectionString, schema: config.schema })
  const closeStores = async () => {
    await stores.close()
  }
  const prefix = config.kind === 'sqlite' ? '' : `"${config.schema}".`
  const table = `${prefix}${TABLE}`
  const previews = `${prefix}${PREVIEWS}`
  let driver: SqlDriver
  try {
    if ('database' in stores) {
      const db = stores.database
      migrateSqlite(db, () =>
        db.exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (name TEXT PRIMARY KEY, value TEXT NOT NULL);
          CREATE TABLE IF NOT EXISTS ${PREVIEWS} (id TEXT PRIMARY KEY, html TEXT NOT NULL, expires_at INTEGER NOT NULL);
          CREATE INDEX IF NOT EXISTS ${PREVIEWS}_expires_at ON ${PREVIEWS} (expires_at)`),
      )
      driver = sqliteDriver(db)
    } else {
      // One transaction under an advisory lock on the schema: instances starting together on one schema do not
      // race on the catalog (CREATE … IF NOT EXISTS is not safe against concurrent creators).
      await migratePostgres(
        stores.pool,
        `adwire_creative_agent:${config.kind === 'postgres' ? config.schema : ''}`,
        async (client) => {
          await client.query(
            `CREATE TABLE IF NOT EXISTS ${table} (name TEXT PRIMARY KEY, value TEXT NOT NULL)`,
          )
          await client.query(
            `CREATE TABLE IF NOT EXISTS ${previews} (id TEXT PRIMARY KEY, html TEXT NOT NULL, expires_at BIGINT NOT NULL)`,
          )
          await client.query(`CREATE INDEX IF NOT EXISTS ${PREVIEWS}_expires_at ON ${previews} (expires_at)`)
        },
      )
      driver = postgresDriver(stores.pool)
    }
  } catch (error) {
    await closeStores()
    throw error
  }
  // The stores own the connection or pool: the driver is never closed, and runs no transaction of its own on
  // the SQLite connection the stores share (each write below is one statement).
  const read = async (name: string) =>
    (await driver.one<{ value: string }>(`SELECT value FROM ${table} WHERE name = ?`, [name]))?.value
  return {
    kind: config.kind,
    claims: stores.claims,
    outbox: stores.outbox,
    getSetting: read,
    async putSettingIfAbsent(name, value) {
      await driver.run(`INSERT INTO ${table} (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, [
        name,
        value,
      ])
      return (await read(name))!
    },
    async putPreviews(pages) {
      const rows = latestPerId(pages)
      // One statement for any realistic number of pages (3 values a row, within both databases' limits).
      for (let start = 0; start < rows.length; start += PREVIEW_ROWS) {
        const chunk = rows.slice(start, start + PREVIEW_ROWS)
        await driver.run(
          `INSERT INTO ${previews} (id, html, expires_at) VALUES ${chunk.map(() => '(?, ?, ?)').join(', ')}
           ON CONFLICT (id) DO UPDATE SET html = excluded.html, expires_at = excluded.expires_at
           WHERE excluded.expires_at > ${PREVIEWS}.expires_at`,
          chunk.flatMap((row) => [row.id, row.html, row.expiresAt.getTime()]),
        )
      }
    },
    async getPreview(id) {
      const row = await driver.one<Parameters<typeof toRow>[0]>(
        `SELECT id, html, expires_at FROM ${previews} WHERE id = ?`,
        [id],
      )
      return row ? toRow(row) : undefined
    },
    async ping() {
      await driver.one('SELECT 1')
    },
    async sweep(now) {
      await stores.sweep(now)
      const nowMs = Math.floor(now * 1000)
      // Two idempotent statements: a sweep stopped between them finishes on the next one.
      await driver.run(`UPDATE ${previews} SET html = '' WHERE expires_at <= ? AND html <> ''`, [nowMs])
      await driver.run(`DELETE FROM ${previews} WHERE expires_at <= ?`, [
        nowMs - PREVIEW_TOMBSTONE_SECONDS * 1000,
      ])
    },
    close: closeStores,
  }
}
