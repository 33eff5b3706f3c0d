/**
 * Opens what the creative agent keeps: the @adwire/store-* stores (request idempotency claims and the webhook
 * outbox), a small settings table (the generated signing key and token hash) and the preview pages served at
 * /previews/{id}, on one SQLite file or one PostgreSQL schema.
 */
import { migratePostgres, migrateSqlite } from '@adwire/service-kit'
import { openPostgresStores } from '@adwire/store-postgres'
import { openSqliteStores } from '@adwire/store-sqlite'
import type { ClaimStore, OutboxStore } from '@adwire/webhooks'
import type { DatabaseConfig } from './env.js'

const TABLE = 'creative_agent_settings'
const PREVIEWS = 'creative_agent_previews'

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
  if (config.kind === 'sqlite') {
    const stores = openSqliteStores({ path: config.path })
    const db = stores.database
    try {
      migrateSqlite(db, () =>
        db.exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (name TEXT PRIMARY KEY, value TEXT NOT NULL);
          CREATE TABLE IF NOT EXISTS ${PREVIEWS} (id TEXT PRIMARY KEY, html TEXT NOT NULL, expires_at INTEGER NOT NULL);
          CREATE INDEX IF NOT EXISTS ${PREVIEWS}_expires_at ON ${PREVIEWS} (expires_at)`),
      )
    } catch (error) {
      stores.close()
      throw error
    }
    const select = db.prepare(`SELECT value FROM ${TABLE} WHERE name = ?`)
    const insert = db.prepare(
      `INSERT INTO ${TABLE} (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`,
    )
    const read = (name: string) => (select.get(name) as { value: string } | undefined)?.value
    const upsertPreview = db.prepare(
      `INSERT INTO ${PREVIEWS} (id, html, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET html = excluded.html, expires_at = excluded.expires_at
       WHERE excluded.expires_at > ${PREVIEWS}.expires_at`,
    )
    const putPreviews = db.transaction((pages: readonly PreviewRow[]) => {
      for (const page of pages) upsertPreview.run(page.id, page.html, page.expiresAt.getTime())
    })
    const selectPreview = db.prepare(`SELECT id, html, expires_at FROM ${PREVIEWS} WHERE id = ?`)
    const emptyExpired = db.prepare(`UPDATE ${PREVIEWS} SET html = '' WHERE expires_at <= ? AND html <> ''`)
    const deleteOld = db.prepare(`DELETE FROM ${PREVIEWS} WHERE expires_at <= ?`)
    const sweepPreviews = db.transaction((nowMs: number) => {
      emptyExpired.run(nowMs)
      deleteOld.run(nowMs - PREVIEW_TOMBSTONE_SECONDS * 1000)
    })
    return {
      kind: 'sqlite',
      claims: stores.claims,
      outbox: stores.outbox,
      getSetting: async (name) => read(name),
      async putSettingIfAbsent(name, value) {
        insert.run(name, value)
        return read(name)!
      },
      async putPreviews(pages) {
        if (pages.length > 0) putPreviews.immediate(latestPerId(pages))
      },
      async getPreview(id) {
        const row = selectPreview.get(id) as Parameters<typeof toRow>[0] | undefined
        return row ? toRow(row) : undefined
      },
      async ping() {
        db.prepare('SELECT 1').get()
      },
      async sweep(now) {
        await stores.sweep(now)
        sweepPreviews.immediate(Math.floor(now * 1000))
      },
      async close() {
        stores.close()
      },
    }
  }
  const stores = await openPostgresStores({
    connectionString: config.connectionString,
    schema: config.schema,
  })
  const table = `"${config.schema}".${TABLE}`
  const previews = `"${config.schema}".${PREVIEWS}`
  try {
    // One transaction under an advisory lock on the schema: instances starting together on one schema do not
    // race on the catalog (CREATE … IF NOT EXISTS is not safe against concurrent creators).
    await migratePostgres(stores.pool, `adwire_creative_agent:${config.schema}`, async (client) => {
      await client.query(`CREATE TABLE IF NOT EXISTS ${table} (name TEXT PRIMARY KEY, value TEXT NOT NULL)`)
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${previews} (id TEXT PRIMARY KEY, html TEXT NOT NULL, expires_at BIGINT NOT NULL)`,
      )
      await client.query(`CREATE INDEX IF NOT EXISTS ${PREVIEWS}_expires_at ON ${previews} (expires_at)`)
    })
  } catch (error) {
    await stores.close()
    throw error
  }
  const read = async (name: string) =>
    (await stores.pool.query<{ value: string }>(`SELECT value FROM ${table} WHERE name = $1`, [name])).rows[0]
      ?.value
  return {
    kind: 'postgres',
    claims: stores.claims,
    outbox: stores.outbox,
    getSetting: read,
    async putSettingIfAbsent(name, value) {
      await stores.pool.query(
        `INSERT INTO ${table} (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
        [name, value],
      )
      return (await read(name))!
    },
    async putPreviews(pages) {
      if (pages.length === 0) return
      const rows = latestPerId(pages)
      // One statement whatever the number of pages: the columns go as three arrays.
      await stores.pool.query(
        `INSERT INTO ${previews} AS p (id, html, expires_at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
         ON CONFLICT (id) DO UPDATE SET html = EXCLUDED.html, expires_at = EXCLUDED.expires_at
         WHERE EXCLUDED.expires_at > p.expires_at`,
        [rows.map((row) => row.id), rows.map((row) => row.html), rows.map((row) => row.expiresAt.getTime())],
      )
    },
    async getPreview(id) {
      const found = await stores.pool.query<Parameters<typeof toRow>[0]>(
        `SELECT id, html, expires_at FROM ${previews} WHERE id = $1`,
        [id],
      )
      return found.rows[0] ? toRow(found.rows[0]) : undefined
    },
    async ping() {
      await stores.pool.query('SELECT 1')
    },
    async sweep(now) {
      await stores.sweep(now)
      const nowMs = Math.floor(now * 1000)
      await stores.pool.query(`UPDATE ${previews} SET html = '' WHERE expires_at <= $1 AND html <> ''`, [
        nowMs,
      ])
      await stores.pool.query(`DELETE FROM ${previews} WHERE expires_at <= $1`, [
        nowMs - PREVIEW_TOMBSTONE_SECONDS * 1000,
      ])
    },
    close: () => stores.close(),
  }
}
