/**
 * Caller transactions on the stores' one connection. better-sqlite3 is synchronous and a connection has one
 * transaction at a time, so a transaction that awaits (the caller's own writes interleaved with an outbox
 * enqueue) must keep every other user of the connection out until it ends, or their statements would join it
 * and be rolled back with it. The gate does that, fairly:
 * - work started inside the open transaction (its async context) runs at once and joins it;
 * - any other work is queued and run by the gate itself, synchronously and in order, the moment the transaction
 *   ends, before the next transaction begins (no other code runs in between, so it never joins one);
 * - transactions take turns in the order they asked.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type Database from 'better-sqlite3'
import { toStoreError } from './errors.js'

interface Token {
  open: boolean
}

interface Queued {
  readonly work: () => unknown
  readonly resolve: (value: unknown) => void
  readonly reject: (error: unknown) => void
}

export class WriteGate {
  readonly #context = new AsyncLocalStorage<Token>()
  /** The open (or reserved: its turn came, its BEGIN is next) transaction. */
  #active: Token | undefined
  /** Work waiting for the open transaction to end. */
  readonly #work: Queued[] = []
  /** Transactions waiting for their turn, each with the token reserved for it. */
  readonly #turns: ((token: Token) => void)[] = []

  /** True when the caller runs inside the open transaction (its statements join it). */
  inside(): boolean {
    const token = this.#context.getStore()
    return token !== undefined && token.open && token === this.#active
  }

  /**
   * Runs `work` (synchronous statements on the connection) now when no transaction is open or the caller runs
   * inside it; else right after the open transaction ends, before any other begins. `detached` work (an outbox
   * worker's lease) never joins a transaction: it always waits for the open one to end.
   */
  exec<T>(database: Database.Database, work: () => T, detached = false): Promise<T> {
    if (this.#active === undefined || (!detached && this.inside())) {
      try {
        return Promise.resolve(work())
      } catch (error) {
        return Promise.reject(toStoreError(error, database))
      }
    }
    return new Promise<T>((resolve, reject) =>
      this.#work.push({
        work: () => {
          try {
            return work()
          } catch (error) {
            throw toStoreError(error, database)
          }
        },
        resolve: resolve as (value: unknown) => void,
        reject,
      }),
    )
  }

  /**
   * Runs `body` in one IMMEDIATE transaction: every store call it makes (and every statement of the caller
   * through {@link WriteGate.exec}) commits with it, or none does when it throws. Nested calls join the open
   * transaction.
   */
  async run<T>(database: Database.Database, body: () => Promise<T>): Promise<T> {
    if (this.inside()) return body()
    let token: Token
    if (this.#active === undefined && this.#turns.length === 0) {
      token = { open: true }
      this.#active = token
    } else {
      token = await new Promise<Token>((resolve) => this.#turns.push(resolve))
    }
    try {
      try {
        database.exec('BEGIN IMMEDIATE')
      } catch (error) {
        throw toStoreError(error, database)
      }
      let value: T
      try {
        value = await this.#context.run(token, body)
      } catch (error) {
        token.open = false
        if (database.inTransaction) database.exec('ROLLBACK')
        throw error
      }
      token.open = false
      try {
        database.exec('COMMIT')
      } catch (error) {
        if (database.inTransaction) database.exec('ROLLBACK')
        throw toStoreError(error, database)
      }
      return value
    } finally {
      token.open = false
      this.#release()
    }
  }

  /** The transaction ended: the queued work runs now, in order, then the next transaction gets its turn. */
  #release(): void {
    this.#active = undefined
    for (const queued of this.#work.splice(0)) {
      try {
        queued.resolve(queued.work())
      } catch (error) {
        queued.reject(error)
      }
    }
    const next = this.#turns.shift()
    if (next) {
      const token: Token = { open: true }
      this.#active = token
      next(token)
    }
  }
}

/**
 * Runs one synchronous store operation through the gate (see {@link WriteGate.exec}), translating its failure
 * with {@link toStoreError}.
 */
export function gated<T>(
  gate: WriteGate,
  database: Database.Database,
  work: () => T,
  detached = false,
): Promise<T> {
  return gate.exec(database, work, detached)
}
