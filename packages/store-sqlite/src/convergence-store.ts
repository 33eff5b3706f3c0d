/**
 * {@link ConvergenceStore} on SQLite: one row per (sender, task) once a terminal status was observed. An
 * observation is one IMMEDIATE transaction; settle and release are single compare-and-set statements on the
 * owning delivery.
 */
import type Database from 'better-sqlite3'
import type { ConvergenceResult, ConvergenceStore, TaskObservation } from '@adwire/webhooks'
import { gated, WriteGate } from './transaction.js'

interface TerminalRow {
  comparison: string
  state: 'publishing' | 'published'
  owner: string
  leaseUntil: number
  expiresAt: number
}

type Task = [sender: string, taskId: string]

export class SqliteConvergenceStore implements ConvergenceStore {
  readonly #database: Database.Database
  readonly #gate: WriteGate
  readonly #observe: Database.Transaction<(observation: TaskObservation) => ConvergenceResult>
  readonly #decide: (observation: TaskObservation) => ConvergenceResult
  readonly #settle: Database.Statement<[...Task, owner: string]>
  readonly #release: Database.Statement<[...Task, owner: string]>
  readonly #sweep: Database.Statement<[now: number]>

  constructor(database: Database.Database, gate: WriteGate = new WriteGate()) {
    this.#gate = gate
    this.#database = database
    const select = database.prepare<Task, TerminalRow>(
      `SELECT comparison, state, owner, lease_until AS leaseUntil, expires_at AS expiresAt
       FROM task_terminals WHERE sender = ? AND task_id = ?`,
    )
    const remove = database.prepare<Task>('DELETE FROM task_terminals WHERE sender = ? AND task_id = ?')
    const insert = database.prepare<
      [...Task, comparison: string, owner: string, leaseUntil: number, expiresAt: number]
    >(
      `INSERT INTO task_terminals (sender, task_id, comparison, state, owner, lease_until, expires_at)
       VALUES (?, ?, ?, 'publishing', ?, ?, ?)`,
    )
    const takeOver = database.prepare<[owner: string, leaseUntil: number, ...Task]>(
      'UPDATE task_terminals SET owner = ?, lease_until = ? WHERE sender = ? AND task_id = ?',
    )
    this.#decide = (observation: TaskObservation): ConvergenceResult => {
      const task: Task = [observation.sender, observation.taskId]
      let row = select.get(...task)
      if (row && row.expiresAt <= observation.now) {
        remove.run(...task)
        row = undefined
      }
      if (!observation.terminal) return row ? 'stale' : 'proceed'
      const leaseUntil = observation.now + observation.leaseSeconds
      if (!row) {
        insert.run(
          ...task,
          observation.comparison,
          observation.deliveryKey,
          leaseUntil,
          observation.now + observation.retentionSeconds,
        )
        return 'proceed'
      }
      if (row.comparison !== observation.comparison) return 'conflict'
      if (row.state === 'published') return 'duplicate'
      if (row.owner !== observation.deliveryKey && row.leaseUntil > observation.now) return 'in_progress'
      takeOver.run(observation.deliveryKey, leaseUntil, ...task)
      return 'proceed'
    }
    this.#observe = database.transaction(this.#decide)
    this.#settle = database.prepare(
      `UPDATE task_terminals SET state = 'published' WHERE sender = ? AND task_id = ? AND owner = ?`,
    )
    this.#release = database.prepare(
      `UPDATE task_terminals SET lease_until = 0 WHERE sender = ? AND task_id = ? AND owner = ? AND state = 'publishing'`,
    )
    this.#sweep = database.prepare('DELETE FROM task_terminals WHERE expires_at <= ?')
  }

  observe(observation: TaskObservation): Promise<ConvergenceResult> {
    return gated(this.#gate, this.#database, () => this.#observe.immediate(observation))
  }

  /**
   * The observation inside a transaction the caller holds and rolls back (to its savepoint) when this throws:
   * the transactional inbox's delivery. No savepoint of its own.
   */
  observeInTransaction(observation: TaskObservation): Promise<ConvergenceResult> {
    return gated(this.#gate, this.#database, () => this.#decide(observation))
  }

  async settle(sender: string, taskId: string, deliveryKey: string, _now: number): Promise<void> {
    await gated(this.#gate, this.#database, () => this.#settle.run(sender, taskId, deliveryKey))
  }

  async release(sender: string, taskId: string, deliveryKey: string): Promise<void> {
    await gated(this.#gate, this.#database, () => this.#release.run(sender, taskId, deliveryKey))
  }

  async sweep(now: number): Promise<number> {
    return gated(this.#gate, this.#database, () => this.sweepNow(now))
  }

  /** The synchronous sweep, for the single transaction of `SqliteStores.sweep`. */
  sweepNow(now: number): number {
    return this.#sweep.run(now).changes
  }
}
