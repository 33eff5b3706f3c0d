/**
 * Caller transactions on the stores' one connection. better-sqlite3 is synchronous and a connection has one
 * transaction at a time, so a transaction that awaits (the caller's own writes interleaved with an outbox
 * enqueue) must keep every other user of the connection out until it ends, or their statements would join it
 * and be rolled back with it. The gate does that: work started inside the open transaction (its async context)
 * runs at once and joins it; any other work waits until it commits or rolls back.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type Database from 'better-sqlite3'
import { toStoreError } from './errors.js'

interface Token {
  open: boolean
}

export class WriteGate {
  readonly #context = new AsyncLocalStorage<Token>()
  #active: Token | undefined
  #ended: Promise<void> = Promise.resolve()

  /** True when the caller runs inside the open transaction (its statements join it). */
  inside(): boolean {
    const token = this.#context.getStore()
    return token !== undefined && token.open && token === this.#active
  }

  /**
   * Undefined when the caller may use the connection now (no transaction open, or inside it); else a promise
   * that resolves once no transaction is open. Call it right before synchronous work, without awaiting anything
   * else in between. `detached` work (an outbox worker's lease) never joins a transaction: it always waits.
   */
  ready(detached = false): Promise<void> | undefined {
    if (this.#active === undefined) return undefined
    if (!detached && this.inside()) return undefined
    return this.#idle()
  }

  async #idle(): Promise<void> {
    while (this.#active !== undefined) await this.#ended
  }

  /**
   * Runs `body` in one IMMEDIATE transaction: every store call it makes (and every write of the caller on the
   * same connection through {@link WriteGate.ready}) commits with it, or none does when it throws. Nested calls
   * join the open transaction.
   */
  async run<T>(database: Database.Database, body: () => Promise<T>): Promise<T> {
    if (this.inside()) return body()
    // Checked and taken in one synchronous step: no other starter slips in between.
    while (this.#active !== undefined) await this.#ended
    const token: Token = { open: true }
    let end!: () => void
    this.#active = token
    this.#ended = new Promise((resolve) => {
      end = resolve
    })
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
      this.#active = undefined
      end()
    }
  }
}

/**
 * Runs one synchronous store operation once the gate lets it through (see {@link WriteGate.ready}), translating
 * its failure with {@link toStoreError}.
 */
export async function gated<T>(
  gate: WriteGate,
  database: Database.Database,
  work: () => T,
  detached = false,
): Promise<T> {
  // Re-checked after every wait, right before the work: a transaction may have begun in between.
  for (let wait = gate.ready(detached); wait; wait = gate.ready(detached)) await wait
  try {
    return work()
  } catch (error) {
    throw toStoreError(error, database)
  }
}
