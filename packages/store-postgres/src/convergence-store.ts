/**
 * {@link ConvergenceStore} on PostgreSQL: the first terminal observation of a seller task wins, and one
 * delivery at a time owns its publication under a lease.
 */
import type { ConvergenceResult, ConvergenceStore, TaskObservation } from '@adwire/webhooks'
import type { Database, Statement } from './database.js'
import { TERMINAL_GENERATIONS, maintainGenerations, type GenerationMaintenance } from './generations.js'

interface TerminalRow {
  comparison: string
  state: 'publishing' | 'published'
  owner: string
}

/**
 * A terminal observation is one upsert that always returns the row as it stands after the decision (an
 * unchanged row when this delivery may not take it), so the outcome is read from the row under its lock:
 * a different comparison is `conflict`, published is `duplicate`, another live owner is `in_progress`.
 * A non-terminal observation only reads.
 *
 * @example
 * const verdict = await stores.convergence.observe({ sender, taskId, terminal: true, comparison, deliveryKey, now, leaseSeconds: 30, retentionSeconds: 86_400 })
 * if (verdict === 'proceed') { await publish(); await stores.convergence.settle(sender, taskId, deliveryKey, now) }
 */
export class PostgresConvergenceStore implements ConvergenceStore {
  readonly #database: Database
  readonly #observeTerminal: Statement
  readonly #observeOther: Statement
  readonly #settle: Statement
  readonly #release: Statement

  constructor(database: Database) {
    this.#database = database
    // The decision of migration 6's observe_terminal: the row is taken over when it expired, or when the same
    // outcome is still being published and its owner is this delivery or its lease ended.
    this.#observeTerminal = database.statement(
      'convergence_observe',
      `SELECT o_comparison AS comparison, o_state AS state, o_owner AS owner
         FROM $schema.observe_terminal($1, $2, $3, $4, $5::float8, $6::float8, $7::float8)`,
    )
    this.#observeOther = database.statement(
      'convergence_observe_other',
      'SELECT EXISTS (SELECT 1 FROM $schema.terminals WHERE sender = $1 AND task_id = $2 AND expires_at > $3) AS terminal',
    )
    this.#settle = database.statement(
      'convergence_settle',
      `UPDATE $schema.terminals SET state = 'published' WHERE sender = $1 AND task_id = $2 AND owner = $3`,
    )
    this.#release = database.statement(
      'convergence_release',
      `UPDATE $schema.terminals SET lease_until = 0 WHERE sender = $1 AND task_id = $2 AND owner = $3 AND state = 'publishing'`,
    )
  }

  async observe(observation: TaskObservation): Promise<ConvergenceResult> {
    const { sender, taskId, now } = observation
    if (!observation.terminal) {
      const { rows } = await this.#database.run<{ terminal: boolean }>(this.#observeOther, [
        sender,
        taskId,
        now,
      ])
      return rows[0]?.terminal ? 'stale' : 'proceed'
    }
    const { rows } = await this.#database.run<TerminalRow>(this.#observeTerminal, [
      sender,
      taskId,
      observation.comparison,
      observation.deliveryKey,
      now,
      observation.leaseSeconds,
      observation.retentionSeconds,
    ])
    const row = rows[0]!
    if (row.comparison !== observation.comparison) return 'conflict'
    if (row.state === 'published') return 'duplicate'
    if (row.owner !== observation.deliveryKey) return 'in_progress'
    return 'proceed'
  }

  async settle(sender: string, taskId: string, deliveryKey: string, _now?: number): Promise<void> {
    await this.#database.run(this.#settle, [sender, taskId, deliveryKey])
  }

  async release(sender: string, taskId: string, deliveryKey: string): Promise<void> {
    await this.#database.run(this.#release, [sender, taskId, deliveryKey])
  }

  /**
   * Expires terminal records by dropping whole generations (migration 6; see PostgresClaimStore.sweep).
   * Resolves with the catalogue's estimate of the records of the generations dropped.
   */
  async sweep(now: number): Promise<number> {
    return (await this.maintain(now)).rows
  }

  /** The generations' maintenance alone (`generations.ts`), also run on open. */
  maintain(now: number): Promise<GenerationMaintenance> {
    return maintainGenerations(this.#database, TERMINAL_GENERATIONS, now)
  }
}
