/**
 * What every store shares: the pool, the quoted schema, named statements and the error mapping. Statements
 * are named per schema (`adwire_<hash>_<name>`), so that `pg` prepares each once per connection and two
 * store sets on one pool with different schemas never collide.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { Pool, PoolClient, QueryResultRow } from 'pg'
import { StoreError, conflictCode, toStoreError, type ConflictCode } from './errors.js'

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

/** The isolation level the stores' transactions run at (PostgreSQL's names, lowercase). */
export type IsolationLevel = 'read committed' | 'repeatable read' | 'serializable'

const ISOLATION_LEVELS: readonly IsolationLevel[] = ['read committed', 'repeatable read', 'serializable']

/**
 * How often a transaction that failed with a serialisation failure (SQLSTATE 40001) or a deadlock (40P01) is
 * run again, and how long to wait before each new attempt.
 */
export interface RetryOptions {
  /** Attempts in all, the first included (default 10; 1 never retries). */
  readonly attempts?: number
  /** The back-off before the second attempt, ms (default 5); it doubles with each attempt. */
  readonly baseDelayMs?: number
  /** The longest back-off, ms (default 250). Each wait is drawn uniformly between 0 and the back-off. */
  readonly maxDelayMs?: number
}

/** One retry of a transaction that failed with a serialisation failure or a deadlock. */
export interface RetryEvent {
  /** What was retried: a statement's name (`claim`, `outbox_record` ...), `inbox`, `outbox_enqueue`, `sweep` ... */
  readonly what: string
  /** The attempt that failed, from 1. */
  readonly attempt: number
  /** `40001` (serialization_failure) or `40P01` (deadlock_detected). */
  readonly code: ConflictCode
  /** The wait before the next attempt, ms. */
  readonly delayMs: number
}

/** How a {@link Database} begins and retries transactions. */
export interface TransactionPolicy {
  /** Set: every transaction begins at this level. Unset: the server's (or session's) default. */
  readonly isolation?: IsolationLevel
  /**
   * Whether a single statement must be wrapped in its own `BEGIN ISOLATION LEVEL … COMMIT` to run at
   * {@link TransactionPolicy.isolation} (a pool the stores did not create, whose sessions keep their default).
   */
  readonly wrapStatements?: boolean
  readonly attempts: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  readonly onRetry?: (event: RetryEvent) => void
}

const DEFAULT_POLICY: TransactionPolicy = { attempts: 10, baseDelayMs: 5, maxDelayMs: 250 }

/** Checks the `isolation` and `retry` options; throws `store_invalid_options`. */
export function transactionPolicy(
  isolation: IsolationLevel | undefined,
  retry: RetryOptions | undefined,
  onRetry: ((event: RetryEvent) => void) | undefined,
  wrapStatements: boolean,
): TransactionPolicy {
  if (isolation !== undefined && !ISOLATION_LEVELS.includes(isolation))
    throw new StoreError(
      'store_invalid_options',
      `isolation must be one of ${ISOLATION_LEVELS.map((level) => `'${level}'`).join(', ')}, not ${JSON.stringify(isolation)}`,
    )
  const attempts = retry?.attempts ?? DEFAULT_POLICY.attempts
  if (!(Number.isSafeInteger(attempts) && attempts >= 1 && attempts <= 1_000))
    throw new StoreError(
      'store_invalid_options',
      `retry.attempts must be an integer from 1 to 1000, not ${attempts}`,
    )
  const baseDelayMs = retry?.baseDelayMs ?? DEFAULT_POLICY.baseDelayMs
  const maxDelayMs = retry?.maxDelayMs ?? Math.max(DEFAULT_POLICY.maxDelayMs, baseDelayMs)
  for (const [name, value] of [
    ['retry.baseDelayMs', baseDelayMs],
    ['retry.maxDelayMs', maxDelayMs],
  ] as const)
    if (!(Number.isFinite(value) && value >= 0 && value <= 60_000))
      throw new StoreError(
        'store_invalid_options',
        `${name} must be a number of ms from 0 to 60000, not ${value}`,
      )
  if (onRetry !== undefined && typeof onRetry !== 'function')
    throw new StoreError('store_invalid_options', 'onRetry must be a function')
  return {
    ...(isolation !== undefined ? { isolation, wrapStatements } : {}),
    attempts,
    baseDelayMs,
    maxDelayMs,
    ...(onRetry ? { onRetry } : {}),
  }
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
  /** How transactions begin and are retried. */
  readonly policy: TransactionPolicy
  /** `BEGIN`, with the isolation level when one is set. */
  readonly begin: string

  constructor(
    pool: Pool,
    readonly schemaName: string,
    policy: TransactionPolicy = DEFAULT_POLICY,
  ) {
    assertSchemaName(schemaName)
    this.#pool = pool
    this.schema = quoteIdentifier(schemaName)
    this.#prefix = `adwire_${shortHash(schemaName)}_`
    this.policy = policy
    this.begin = policy.isolation ? `BEGIN ISOLATION LEVEL ${policy.isolation.toUpperCase()}` : 'BEGIN'
  }

  /** This database with every statement on `client` (a connection holding an open transaction). */
  on(client: PoolClient): Database {
    const bound = new Database(this.#pool, this.schemaName, this.policy)
    bound.#client = client
    bound.#scope = this.#scope
    return bound
  }

  /** This database never joining a caller transaction (the outbox worker's lease and record). */
  detached(): Database {
    const copy = new Database(this.#pool, this.schemaName, this.policy)
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
   * join the open one. It is never retried (the body is the caller's, and may have done more than write):
   * a serialisation failure rejects with `store_unavailable`, for the caller to run it again.
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
      await client.query(this.begin)
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

  /**
   * Runs a named statement on any pooled connection (one round trip). Outside a transaction it is its own
   * transaction, run again after a serialisation failure or a deadlock (see {@link Database.retrying}).
   */
  async run<Row extends QueryResultRow>(
    statement: Statement,
    values: readonly unknown[],
  ): Promise<{ rows: Row[]; rowCount: number }> {
    return this.#statement(statement.name.slice(this.#prefix.length), {
      name: statement.name,
      text: statement.text,
      values: values as unknown[],
    })
  }

  /** Runs an unnamed, parameterised statement (for the cold paths: sweeps, inspection), as {@link run}. */
  async execute<Row extends QueryResultRow>(
    what: string,
    text: string,
    values: readonly unknown[],
  ): Promise<{ rows: Row[]; rowCount: number }> {
    return this.#statement(what, { text, values: values as unknown[] })
  }

  async #statement<Row extends QueryResultRow>(
    what: string,
    query: { name?: string; text: string; values: unknown[] },
  ): Promise<{ rows: Row[]; rowCount: number }> {
    this.#assertOpen()
    const joined = this.#joined()
    if (joined) {
      // Part of a larger transaction: only the whole of it could be run again, by its owner.
      try {
        const result = await joined.query<Row>(query)
        return { rows: result.rows, rowCount: result.rowCount ?? 0 }
      } catch (error) {
        throw toStoreError(error, what)
      }
    }
    return this.retrying(what, async () => {
      if (this.policy.wrapStatements) {
        // A pool whose sessions run at their own default: the statement gets its own transaction.
        return this.#once(async (client) => {
          const result = await client.query<Row>(query)
          return { rows: result.rows, rowCount: result.rowCount ?? 0 }
        })
      }
      const result = await this.#pool.query<Row>(query)
      return { rows: result.rows, rowCount: result.rowCount ?? 0 }
    })
  }

  /**
   * Runs `body` in one transaction on one connection; rolls back when it throws. A transaction of its own is
   * run again, from the start, after a serialisation failure or a deadlock; inside a caller's transaction
   * `body` joins it and is not retried. `lockFirst`: `body` first serialises on an advisory lock, then must
   * see what committed while it waited, so its own transaction is READ COMMITTED whatever the isolation option
   * (a REPEATABLE READ or SERIALIZABLE snapshot is taken by the first statement, before the lock).
   */
  async transaction<T>(
    what: string,
    body: (client: PoolClient) => Promise<T>,
    options: { readonly lockFirst?: boolean } = {},
  ): Promise<T> {
    this.#assertOpen()
    const joined = this.#joined()
    if (joined) {
      try {
        return await body(joined)
      } catch (error) {
        throw toStoreError(error, what)
      }
    }
    const begin = options.lockFirst ? 'BEGIN ISOLATION LEVEL READ COMMITTED' : this.begin
    return this.retrying(what, () => this.#once(body, begin))
  }

  /** One attempt of a transaction on a connection of its own: BEGIN, `body`, COMMIT, or ROLLBACK. */
  async #once<T>(body: (client: PoolClient) => Promise<T>, begin = this.begin): Promise<T> {
    const client = await this.#pool.connect()
    let broken: unknown
    try {
      await client.query(begin)
      const value = await body(client)
      await client.query('COMMIT')
      return value
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError
      })
      throw error
    } finally {
      // A connection whose rollback failed is in an unknown state: destroy it rather than pool it.
      client.release(broken instanceof Error ? broken : undefined)
    }
  }

  /**
   * Runs `attempt`, a whole transaction that committed nothing when it throws, and runs it again when it
   * failed with a serialisation failure (40001) or a deadlock (40P01), up to `policy.attempts` times in all,
   * after a jittered exponential back-off. Each attempt starts from scratch: what a failed one decided is
   * dropped. Resolves with the first attempt that succeeds; rejects with any other failure as a
   * {@link StoreError}, or with `store_retries_exhausted` when every attempt failed so.
   */
  async retrying<T>(what: string, attempt: () => Promise<T>): Promise<T> {
    const { attempts, baseDelayMs, maxDelayMs, onRetry } = this.policy
    for (let number = 1; ; number += 1) {
      try {
        return await attempt()
      } catch (error) {
        const code = conflictCode(error)
        if (code === undefined) throw toStoreError(error, what)
        if (number >= attempts)
          throw new StoreError(
            'store_retries_exhausted',
            `${what} failed ${number} time${number === 1 ? '' : 's'} in a row with ${code === '40001' ? 'a serialization failure' : 'a deadlock'} (SQLSTATE ${code}); retry later`,
            { cause: error },
          )
        // Full jitter: a uniform wait up to the doubling back-off, so that the conflicting parties spread.
        const delayMs = Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (number - 1))
        if (onRetry) {
          try {
            onRetry({ what, attempt: number, code, delayMs })
          } catch {
            // An observer's failure is not the transaction's.
          }
        }
        await new Promise((resolve) => setTimeout(resolve, delayMs))
        this.#assertOpen()
      }
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
