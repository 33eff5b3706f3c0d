/**
 * {@link ConvergenceStore} on PostgreSQL: the first terminal observation of a seller task wins, and one
 * delivery at a time owns its publication under a lease.
 */
import type { ConvergenceResult, ConvergenceStore, TaskObservation } from '@adwire/webhooks'
import type { Database, Statement } from './database.js'

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
  readonly #sweep: Statement

  constructor(database: Database) {
    this.#database = database
    // $4 owner, $5 now; the row is taken over when it expired, or when the same outcome is still being
    // published and its owner is this delivery or its lease ended.
    const takes = `(t.expires_at <= $5 OR (t.comparison = excluded.comparison AND t.state = 'publishing'
                     AND (t.owner = excluded.owner OR t.lease_until <= $5)))`
    const fresh = 't.expires_at <= $5'
    this.#observeTerminal = database.statement(
      'convergence_observe',
      `INSERT INTO $schema.terminals AS t (sender, task_id, comparison, state, owner, lease_until, expires_at)
       VALUES ($1, $2, $3, 'publishing', $4, $5::float8 + $6::float8, $5::float8 + $7::float8)
       ON CONFLICT (sender, task_id) DO UPDATE SET
         comparison = CASE WHEN ${fresh} THEN excluded.comparison ELSE t.comparison END,
         state = CASE WHEN ${fresh} THEN 'publishing' ELSE t.state END,
         owner = CASE WHEN ${takes} THEN excluded.owner ELSE t.owner END,
         lease_until = CASE WHEN ${takes} THEN excluded.lease_until ELSE t.lease_until END,
         expires_at = CASE WHEN ${fresh} THEN excluded.expires_at ELSE t.expires_at END
       RETURNING comparison, state, owner`,
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
    this.#sweep = database.statement(
      'convergence_sweep',
      'DELETE FROM $schema.terminals WHERE expires_at <= $1',
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

  /** Deletes terminal records past their retention; resolves with how many. */
  async sweep(now: number): Promise<number> {
    return (await this.#database.run(this.#sweep, [now])).rowCount
  }
}
