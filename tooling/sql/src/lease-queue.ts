/**
 * A job queue in a table of the caller's, leased by any number of workers across instances, on SQLite and
 * PostgreSQL alike (the shape of the webhook outbox's lease in @adwire/store-*):
 *
 * - `claim` is one statement: an `UPDATE … WHERE key IN (SELECT … ORDER BY … LIMIT n) RETURNING`, whose
 *   sub-select takes `FOR UPDATE SKIP LOCKED` on PostgreSQL (each claimer takes rows nobody holds, none waits)
 *   and runs under SQLite's single writer lock there; every claimed row gets the lease expiry and a fence;
 * - the fence proves the lease: a random text column set at each claim, or, without one, the attempt counter
 *   (counted at the claim, so a reclaim makes the earlier claimer's fence stale);
 * - `done`, `retry`, `renew` and `release` are fenced updates that resolve to false once the lease was lost;
 * - a queue whose claimed rows change state (`states.leased`) gets them back with `recover` once the lease has
 *   expired (requeued while attempts remain, else failed); one whose rows keep their state needs no recovery:
 *   an expired lease is claimable again.
 *
 * Table and column names are SQL identifiers (checked); `order` and {@link SqlFragment}s are trusted SQL.
 */
import type { SqlDriver, SqlExecutor, SqlValue } from './driver.js'
import { SqlError } from './errors.js'

/** A piece of SQL with its `?` values: `{ sql: 'COALESCE(started_at, ?)', params: [now] }`. */
export interface SqlFragment {
  readonly sql: string
  readonly params?: readonly SqlValue[]
}

/** Extra columns a transition sets: a value, or an expression. */
export type Assignments = Readonly<Record<string, SqlValue | SqlFragment>>

export interface LeaseQueueSpec {
  /** The table, optionally schema-qualified (`"tenant".jobs`). */
  readonly table: string
  /** The primary key column. */
  readonly key: string
  readonly state: string
  /** Attempts made: counted at each claim when there is no `fence` column, else at `done` and `retry`. */
  readonly attempts: string
  /** The lease expiry (Unix seconds or ISO 8601 text: whatever `now` is compared with). */
  readonly leaseUntil: string
  /** A text column holding each claim's random fence; absent: `attempts` is the fence. */
  readonly fence?: string
  /** When a ready job is due (retries with back-off); absent: a ready job is due at once. */
  readonly dueAt?: string
  /** A ready job whose `dueAt` is null is due at once (default: it is never claimed). */
  readonly dueWhenNull?: boolean
  /** The last failure's message (set by `retry`, cleared by `done`). */
  readonly error?: string
  readonly states: {
    /**
     * Claimable: one state, or several (the first is the one `release` and `recover` give a job back to, e.g.
     * `['queued', 'retrying']`).
     */
    readonly ready: string | readonly string[]
    /** A claimed job's state; absent: it stays `ready` and the live lease alone keeps others off. */
    readonly leased?: string
    /** Where `done` puts it (unless told another state). */
    readonly done: string
  }
  /** Which due jobs are claimed first (`seq`, `created_at, id`). */
  readonly order: string
  /** The columns a claim returns. Default `*`. */
  readonly returning?: string
}

/** A key or fence value. */
export type Fence = string | number

/** A claimed row and the fence that proves its lease. */
export interface Leased<Row> {
  readonly row: Row
  readonly fence: Fence
}

/** The fenced operations, on the driver or on a caller's transaction (`queue.on(tx)`). */
export interface LeaseQueueOperations {
  /** Claims up to `limit` due jobs until `leaseUntil`, in `order`. */
  claim<Row>(options: {
    readonly now: SqlValue
    readonly leaseUntil: SqlValue
    readonly limit: number
    readonly set?: Assignments
  }): Promise<Leased<Row>[]>
  /** Finishes a job (`states.done`, or `state`); false when the lease was lost. */
  done(
    key: SqlValue,
    fence: Fence,
    options?: { readonly state?: string; readonly set?: Assignments },
  ): Promise<boolean>
  /**
   * {@link LeaseQueueOperations.done} for many jobs in one statement; resolves with whether each lease was
   * still held, in the order given.
   */
  doneMany(
    jobs: readonly { readonly key: SqlValue; readonly fence: Fence }[],
    options?: { readonly state?: string; readonly set?: Assignments },
  ): Promise<boolean[]>
  /** Gives a failed job back, due again at `dueAt` (in `state`, one of the ready ones); false when the lease was lost. */
  retry(
    key: SqlValue,
    fence: Fence,
    options: { readonly dueAt: SqlValue; readonly error?: string; readonly state?: string },
  ): Promise<boolean>
  /** Extends the lease; false when it was lost. */
  renew(key: SqlValue, fence: Fence, leaseUntil: SqlValue): Promise<boolean>
  /** Gives a claimed job back unattempted (the worker is stopping). */
  release(key: SqlValue, fence: Fence, options?: { readonly set?: Assignments }): Promise<boolean>
}

export interface LeaseQueue extends LeaseQueueOperations {
  /** The same operations inside a transaction the caller holds (e.g. finishing a job with its results). */
  on(tx: SqlExecutor): LeaseQueueOperations
  /**
   * Jobs left leased past `now` by a worker that stopped renewing (queues with `states.leased`): back to ready
   * while they have had fewer than `maxAttempts` attempts, else to `failed.state`. Keys in `skip` (running
   * here) are left alone. Resolves to the keys requeued and failed.
   */
  recover(options: {
    readonly now: SqlValue
    /** A number, or the column holding each job's own limit. */
    readonly maxAttempts: number | { readonly column: string }
    /** What else a requeued job gets. */
    readonly requeue?: Assignments
    readonly failed: { readonly state: string; readonly set?: Assignments }
    readonly skip?: readonly SqlValue[]
  }): Promise<{ requeued: SqlValue[]; failed: SqlValue[] }>
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/

/** The ready states of a queue, the first one first. */
const readyOf = (spec: LeaseQueueSpec): readonly string[] =>
  typeof spec.states.ready === 'string' ? [spec.states.ready] : spec.states.ready

/** `name`, checked to be an SQL identifier. */
function identifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new SqlError('sql_invalid_queue', `not an SQL identifier: ${name}`)
  return name
}
const TABLE = /^("(?:[^"]|"")+"\.)?[A-Za-z_][A-Za-z0-9_]*$/

function checked(spec: LeaseQueueSpec): void {
  const columns = [spec.key, spec.state, spec.attempts, spec.leaseUntil, spec.fence, spec.dueAt, spec.error]
  const returning = spec.returning === undefined || spec.returning === '*' ? [] : spec.returning.split(',')
  const bad = [...columns, ...returning]
    .filter((name): name is string => name !== undefined)
    .find((name) => !IDENTIFIER.test(name.trim()))
  if (bad !== undefined || !TABLE.test(spec.table))
    throw new SqlError('sql_invalid_queue', `not an SQL identifier: ${bad ?? spec.table}`)
  // Without a fence column a claim's fence is the attempt counter it returns.
  if (!spec.fence && returning.length > 0 && !returning.some((name) => name.trim() === spec.attempts))
    throw new SqlError(
      'sql_invalid_queue',
      `a claim must return ${spec.attempts}, the fence of ${spec.table}`,
    )
}

/** `a = ?, b = COALESCE(b, ?)` and its values, in order. */
function assignments(set: Assignments): { sql: string[]; params: SqlValue[] } {
  const sql: string[] = []
  const params: SqlValue[] = []
  for (const [column, value] of Object.entries(set)) {
    if (!IDENTIFIER.test(column)) throw new SqlError('sql_invalid_queue', `not an SQL identifier: ${column}`)
    if (value !== null && typeof value === 'object') {
      sql.push(`${column} = ${value.sql}`)
      params.push(...(value.params ?? []))
    } else {
      sql.push(`${column} = ?`)
      params.push(value)
    }
  }
  return { sql, params }
}

function operations(db: SqlExecutor, spec: LeaseQueueSpec): LeaseQueueOperations {
  const { table, key, state, attempts, leaseUntil, states } = spec
  const readyStates = readyOf(spec)
  const held = states.leased ?? readyStates[0]!
  const fenceColumn = spec.fence ?? attempts
  const owned = `${key} = ? AND ${fenceColumn} = ? AND ${state} = ?`
  /** A fenced update: resolves to whether the lease was still the fence's. */
  const update = async (set: Assignments, keyValue: SqlValue, fence: Fence): Promise<boolean> => {
    const { sql, params } = assignments(set)
    const changed = await db.run(`UPDATE ${table} SET ${sql.join(', ')} WHERE ${owned}`, [
      ...params,
      keyValue,
      fence,
      held,
    ])
    return changed === 1
  }
  const counted = spec.fence ? { [attempts]: { sql: `${attempts} + 1` } } : {}
  const finished = (options: { readonly state?: string; readonly set?: Assignments }): Assignments => ({
    [state]: options.state ?? states.done,
    [leaseUntil]: null,
    ...counted,
    ...(spec.error ? { [spec.error]: null } : {}),
    ...options.set,
  })
  return {
    async claim<Row>(options: Parameters<LeaseQueueOperations['claim']>[0]) {
      const fence = spec.fence ? crypto.randomUUID() : undefined
      const set = assignments({
        [leaseUntil]: options.leaseUntil,
        ...(spec.fence ? { [spec.fence]: fence! } : { [attempts]: { sql: `${attempts} + 1` } }),
        ...(states.leased ? { [state]: states.leased } : {}),
        ...options.set,
      })
      const ready = [`${state} IN (${readyStates.map(() => '?').join(', ')})`]
      const readyParams: SqlValue[] = [...readyStates]
      if (spec.dueAt) {
        ready.push(spec.dueWhenNull ? `(${spec.dueAt} IS NULL OR ${spec.dueAt} <= ?)` : `${spec.dueAt} <= ?`)
        readyParams.push(options.now)
      }
      if (!states.leased) {
        ready.push(`(${leaseUntil} IS NULL OR ${leaseUntil} <= ?)`)
        readyParams.push(options.now)
      }
      const lock = db.dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : ''
      const rows = await db.all<Row>(
        `UPDATE ${table} SET ${set.sql.join(', ')}
         WHERE ${key} IN (SELECT ${key} FROM ${table} WHERE ${ready.join(' AND ')}
                          ORDER BY ${spec.order} LIMIT ?${lock})
         RETURNING ${spec.returning ?? '*'}`,
        [...set.params, ...readyParams, options.limit],
      )
      return rows.map((row) => ({
        row,
        fence: fence ?? Number((row as Record<string, unknown>)[attempts]),
      }))
    },
    done: (keyValue, fence, options = {}) => update(finished(options), keyValue, fence),
    async doneMany(jobs, options = {}) {
      if (jobs.length === 0) return []
      const { sql, params } = assignments(finished(options))
      const owns = jobs.map(() => `(${key} = ? AND ${fenceColumn} = ?)`).join(' OR ')
      const rows = await db.all<{ job_key: SqlValue }>(
        `UPDATE ${table} SET ${sql.join(', ')} WHERE ${state} = ? AND (${owns}) RETURNING ${key} AS job_key`,
        [...params, held, ...jobs.flatMap((job) => [job.key, job.fence])],
      )
      const changed = new Set(rows.map((row) => String(row.job_key)))
      return jobs.map((job) => changed.has(String(job.key)))
    },
    async retry(keyValue, fence, options) {
      if (!spec.dueAt)
        throw new SqlError('sql_invalid_queue', `${table} has no due-time column to retry with`)
      if (options.state !== undefined && !readyStates.includes(options.state))
        throw new SqlError('sql_invalid_queue', `${options.state} is not a ready state of ${table}`)
      return update(
        {
          [state]: options.state ?? readyStates[0]!,
          [spec.dueAt]: options.dueAt,
          [leaseUntil]: null,
          ...counted,
          ...(spec.error ? { [spec.error]: options.error ?? null } : {}),
        },
        keyValue,
        fence,
      )
    },
    renew: (keyValue, fence, until) => update({ [leaseUntil]: until }, keyValue, fence),
    release: (keyValue, fence, options = {}) =>
      update(
        {
          [leaseUntil]: null,
          ...(states.leased ? { [state]: readyStates[0]! } : {}),
          ...(spec.fence ? {} : { [attempts]: { sql: `${attempts} - 1` } }),
          ...options.set,
        },
        keyValue,
        fence,
      ),
  }
}

/**
 * @example
 * const queue = leaseQueue(driver, {
 *   table: 'jobs', key: 'id', state: 'state', attempts: 'attempts', leaseUntil: 'lease_until',
 *   fence: 'fence', dueAt: 'due_at', error: 'error', states: { ready: 'pending', done: 'done' }, order: 'due_at, id',
 * })
 * for (const { row, fence } of await queue.claim<{ id: string }>({ now, leaseUntil: now + 60, limit: 10 })) {
 *   const ok = await attempt(row)
 *   if (ok) await queue.done(row.id, fence)
 *   else await queue.retry(row.id, fence, { dueAt: now + backoffSeconds(1, { baseSeconds: 1, capSeconds: 300 }) })
 * }
 */
export function leaseQueue(driver: SqlDriver, spec: LeaseQueueSpec): LeaseQueue {
  checked(spec)
  const { table, key, state, attempts, leaseUntil, states } = spec
  const readyStates = readyOf(spec)
  const fenceColumn = spec.fence ?? attempts
  return {
    ...operations(driver, spec),
    on: (tx) => operations(tx, spec),
    async recover(options) {
      const leased = states.leased
      if (!leased) throw new SqlError('sql_invalid_queue', `${table} keeps no leased state to recover from`)
      return driver.transaction(async (tx) => {
        const lock = tx.dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : ''
        const skip = new Set((options.skip ?? []).map(String))
        const limit = typeof options.maxAttempts === 'number' ? '?' : identifier(options.maxAttempts.column)
        const stale = (
          await tx.all<{ job_key: SqlValue; job_fence: Fence; job_attempts: number; job_limit: number }>(
            `SELECT ${key} AS job_key, ${fenceColumn} AS job_fence, ${attempts} AS job_attempts, ${limit} AS job_limit
             FROM ${table} WHERE ${state} = ? AND (${leaseUntil} IS NULL OR ${leaseUntil} < ?)${lock}`,
            [...(typeof options.maxAttempts === 'number' ? [options.maxAttempts] : []), leased, options.now],
          )
        ).filter((job) => !skip.has(String(job.job_key)))
        const requeued: SqlValue[] = []
        const failed: SqlValue[] = []
        const owned = `${key} = ? AND ${fenceColumn} = ? AND ${state} = ?`
        for (const job of stale) {
          const retry = Number(job.job_attempts) < Number(job.job_limit)
          const { sql, params } = assignments({
            [state]: retry ? readyStates[0]! : options.failed.state,
            [leaseUntil]: null,
            ...(retry ? options.requeue : options.failed.set),
          })
          await tx.run(`UPDATE ${table} SET ${sql.join(', ')} WHERE ${owned}`, [
            ...params,
            job.job_key,
            job.job_fence,
            leased,
          ])
          ;(retry ? requeued : failed).push(job.job_key)
        }
        return { requeued, failed }
      })
    },
  }
}
