/**
 * What every store shares: the pool, the quoted schema, named statements and the error mapping. Statements
 * are named per schema (`adwire_<hash>_<name>`), so that `pg` prepares each once per connection and two
 * store sets on one pool with different schemas never collide.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { Pool, PoolClient, QueryResultRow } from 'pg'
import { StoreError, toStoreError } from './errors.js'

/** A plain lowercase identifier, as PostgreSQL folds unquoted names, at most 63 bytes, not `pg_*`. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** Throws `store_invalid_options` unless `schema` is a plain identifier. */
export function assertSchemaName(schema: string): void {
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema) || schema.startsWith('pg_')) {
    throw new StoreError(
      'store_invalid_options',
      `schema ${JSON.stringify(schema)} is not a plain identifier (lowercase letters, digits and _, at most 63, not pg_*)`,
    )
  }
}

/** `"name"` with embedded quotes doubled; the name is validated first, so this is belt and braces. */
export const quoteIdentifier = (name: string) => `"${name.replaceAll('"', '""')}"`

/** FNV-1a, 32 bits, as 8 hex digits: short statement names that differ per schema. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0).toString(16).padStart(8, '0')
}

/** A statement: its SQL (with `$schema.` where tables go) and whether to prepare it by name. */
export interface Statement {
  readonly name: string
  readonly text: string
}

/** A caller's open transaction ({@link Database.callerTransaction}): its connection while it is open. */
interface Scope {
  readonly client: PoolClient
  open: boolean
}

export class Database {
  /** The quoted schema, to put before table names. */
  readonly schema: string
  readonly #pool: Pool
  readonly #prefix: string
  /** Set on a database bound to one open transaction ({@link Database.on}). */
  #client: PoolClient | undefined
  /** Shared by every copy of this database: the caller transaction the current async context runs in. */
  #scope = new AsyncLocalStorage<Scope>()
  /** Set on the copy that never joins a caller transaction ({@link Database.detached}). */
  #detached = false
  #closed = false

  constructor(
    pool: Pool,
    readonly schemaName: string,
  ) {
    assertSchemaName(schemaName)
    this.#pool = pool
    this.schema = quoteIdentifier(schemaName)
    this.#prefix = `adwire_${shortHash(schemaName)}_`
  }

  /** This database with every statement on `client` (a connection holding an open transaction). */
  on(client: PoolClient): Database {
    const bound = new Database(this.#pool, this.schemaName)
    bound.#client = client
    bound.#scope = this.#scope
    return bound
  }

  /** This database never joining a caller transaction (the outbox worker's lease and record). */
  detached(): Database {
    const copy = new Database(this.#pool, this.schemaName)
    copy.#scope = this.#scope
    copy.#detached = true
    return copy
  }

  /** The connection of the open transaction this call runs in, if any: a bound one, or the caller's. */
  #joined(): PoolClient | undefined {
    if (this.#client) return this.#client
    if (this.#detached) return undefined
    const scope = this.#scope.getStore()
    return scope?.open ? scope.client : undefined
  }

  /**
   * Runs `body` in one transaction that every statement of these stores made inside it (in its async context)
   * joins: a caller's own writes on `client` and an outbox enqueue commit together, or none does. Nested calls
   * join the open one.
   */
  async callerTransaction<T>(body: (client: PoolClient) => Promise<T>): Promise<T> {
    const joined = this.#joined()
    if (joined) return body(joined)
    this.#assertOpen()
    let client: PoolClient
    try {
      client = await this.#pool.connect()
    } catch (error) {
      throw toStoreError(error, 'transaction')
    }
    const scope: Scope = { client, open: true }
    let broken: unknown
    try {
      await client.query('BEGIN')
      const value = await this.#scope.run(scope, () => body(client))
      // Closed before the commit: work the body started and left running goes to the pool from now on.
      scope.open = false
      await client.query('COMMIT')
      return value
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError
      })
      throw error
    } finally {
      scope.open = false
      client.release(broken instanceof Error ? broken : undefined)
    }
  }

  /** The connection the caller's statements go to now: the open transaction's, else the pool. */
  connection(): Pool | PoolClient {
    return this.#joined() ?? this.#pool
  }

  /** A named statement on this schema: `sql` may write `$schema.table`. */
  statement(name: string, sql: string): Statement {
    return { name: this.#prefix + name, text: sql.replaceAll('$schema.', `${this.schema}.`) }
  }

  /** Runs a named statement on any pooled connection (one round trip). */
  async run<Row extends QueryResultRow>(
    statement: Statement,
    values: readonly unknown[],
  ): Promise<{ rows: Row[]; rowCount: number }> {
    this.#assertOpen()
    try {
      const result = await (this.#joined() ?? this.#pool).query<Row>({
        name: statement.name,
        text: statement.text,
        values: values as unknown[],
      })
      return { rows: result.rows, rowCount: result.rowCount ?? 0 }
    } catch (error) {
      throw toStoreError(error, statement.name.slice(this.#prefix.length))
    }
  }

  /** Runs an unnamed, parameterised statement (for the cold paths: sweeps, inspection). */
  async execute<Row extends QueryResultRow>(
    what: string,
    text: string,
    values: readonly unknown[],
  ): Promise<{ rows: Row[]; rowCount: number }> {
    this.#assertOpen()
    try {
      const result = await (this.#joined() ?? this.#pool).query<Row>(text, values as unknown[])
      return { rows: result.rows, rowCount: result.rowCount ?? 0 }
    } catch (error) {
      throw toStoreError(error, what)
    }
  }

  /** Runs `body` in one transaction on one connection; rolls back when it throws. */
  async transaction<T>(what: string, body: (client: PoolClient) => Promise<T>): Promise<T> {
    this.#assertOpen()
    const joined = this.#joined()
    if (joined) {
      try {
        return await body(joined)
      } catch (error) {
        throw toStoreError(error, what)
      }
    }
    let client: PoolClient
    try {
      client = await this.#pool.connect()
    } catch (error) {
      throw toStoreError(error, what)
    }
    let broken: unknown
    try {
      await client.query('BEGIN')
      const value = await body(client)
      await client.query('COMMIT')
      return value
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError
      })
      throw toStoreError(error, what)
    } finally {
      // A connection whose rollback failed is in an unknown state: destroy it rather than pool it.
      client.release(broken instanceof Error ? broken : undefined)
    }
  }

  /** A client for work that must stay on one session (the migration lock). */
  async connect(what: string): Promise<PoolClient> {
    this.#assertOpen()
    try {
      return await this.#pool.connect()
    } catch (error) {
      throw toStoreError(error, what)
    }
  }

  markClosed(): void {
    this.#closed = true
  }

  #assertOpen(): void {
    if (this.#closed) throw new StoreError('store_closed', 'the PostgreSQL stores were closed')
  }
}
