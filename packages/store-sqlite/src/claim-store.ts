/**
 * {@link ClaimStore} on SQLite: one row per (namespace, scope, key). A claim is one IMMEDIATE transaction
 * (read the row, decide, write), so processes sharing the file never both win; complete and release are
 * single compare-and-set statements on the fence.
 */
import { randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import type { ClaimInput, ClaimRef, ClaimResult, ClaimStore } from '@adwire/webhooks'
import { gated, WriteGate } from './transaction.js'

interface ClaimRow {
  fingerprint: string
  state: 'processing' | 'completed'
  leaseUntil: number
  expiresAt: number
  result: string | null
}

type Key = [namespace: string, scope: string, key: string]

export class SqliteClaimStore implements ClaimStore {
  readonly #database: Database.Database
  readonly #gate: WriteGate
  readonly #claim: Database.Transaction<(input: ClaimInput) => ClaimResult>
  readonly #decide: (input: ClaimInput) => ClaimResult
  readonly #complete: Database.Statement<[result: string | null, ...Key, fence: string]>
  readonly #release: Database.Statement<[...Key, fence: string]>
  readonly #sweep: Database.Statement<[now: number]>

  constructor(database: Database.Database, gate: WriteGate = new WriteGate()) {
    this.#gate = gate
    this.#database = database
    const select = database.prepare<Key, ClaimRow>(
      `SELECT fingerprint, state, lease_until AS leaseUntil, expires_at AS expiresAt, result
       FROM claims WHERE namespace = ? AND scope = ? AND key = ?`,
    )
    const remove = database.prepare<Key>('DELETE FROM claims WHERE namespace = ? AND scope = ? AND key = ?')
    const takeOver = database.prepare<[fence: string, leaseUntil: number, ...Key]>(
      'UPDATE claims SET fence = ?, lease_until = ? WHERE namespace = ? AND scope = ? AND key = ?',
    )
    const scopeRecords = database
      .prepare<[namespace: string, scope: string], number>(
        'SELECT records FROM claim_scopes WHERE namespace = ? AND scope = ?',
      )
      .pluck()
    const expiredInScope = database
      .prepare<[namespace: string, scope: string, now: number], number>(
        'SELECT count(*) FROM claims WHERE namespace = ? AND scope = ? AND expires_at <= ?',
      )
      .pluck()
    const insert = database.prepare<
      [...Key, fingerprint: string, fence: string, leaseUntil: number, expiresAt: number]
    >(
      `INSERT INTO claims (namespace, scope, key, fingerprint, state, fence, lease_until, expires_at, result)
       VALUES (?, ?, ?, ?, 'processing', ?, ?, ?, NULL)`,
    )
    // A new key below the scope's cap: claimed by its insert alone (a key already there conflicts, changes
    // nothing, and is decided from its row below).
    const insertIfAbsent = database.prepare<
      [...Key, fingerprint: string, fence: string, leaseUntil: number, expiresAt: number]
    >(
      `INSERT INTO claims (namespace, scope, key, fingerprint, state, fence, lease_until, expires_at, result)
       VALUES (?, ?, ?, ?, 'processing', ?, ?, ?, NULL) ON CONFLICT (namespace, scope, key) DO NOTHING`,
    )
    this.#decide = (input: ClaimInput): ClaimResult => {
      const key: Key = [input.namespace, input.scope, input.key]
      // Rows in the scope (live or not) below its cap: this insert cannot pass it.
      if (
        input.maxPerScope === undefined ||
        (scopeRecords.get(input.namespace, input.scope) ?? 0) < input.maxPerScope
      ) {
        const fence = randomUUID()
        const inserted = insertIfAbsent.run(
          ...key,
          input.fingerprint,
          fence,
          input.now + input.leaseSeconds,
          input.now + input.retentionSeconds,
        )
        if (inserted.changes === 1) return { kind: 'claimed', fence, takeover: false }
      }
      let row = select.get(...key)
      if (row && row.expiresAt <= input.now) {
        remove.run(...key)
        row = undefined
      }
      if (row) {
        if (row.fingerprint !== input.fingerprint) return { kind: 'conflict' }
        if (row.state === 'completed') return { kind: 'completed', result: row.result }
        if (row.leaseUntil > input.now) return { kind: 'processing', leaseExpiresAt: row.leaseUntil }
        const fence = randomUUID()
        takeOver.run(fence, input.now + input.leaseSeconds, ...key)
        return { kind: 'claimed', fence, takeover: true }
      }
      if (input.maxPerScope !== undefined) {
        // Live records ≤ rows: only a scope with enough rows needs its expired ones counted (a range scan of
        // the not yet swept ones).
        const records = scopeRecords.get(input.namespace, input.scope) ?? 0
        if (records >= input.maxPerScope) {
          const live = records - (expiredInScope.get(input.namespace, input.scope, input.now) ?? 0)
          if (live >= input.maxPerScope) return { kind: 'capacity' }
        }
      }
      const fence = randomUUID()
      insert.run(
        ...key,
        input.fingerprint,
        fence,
        input.now + input.leaseSeconds,
        input.now + input.retentionSeconds,
      )
      return { kind: 'claimed', fence, takeover: false }
    }
    this.#claim = database.transaction(this.#decide)
    this.#complete = database.prepare(
      `UPDATE claims SET result = CASE WHEN state = 'processing' THEN ? ELSE result END, state = 'completed'
       WHERE namespace = ? AND scope = ? AND key = ? AND fence = ?`,
    )
    this.#release = database.prepare(
      `UPDATE claims SET lease_until = 0 WHERE namespace = ? AND scope = ? AND key = ? AND fence = ? AND state = 'processing'`,
    )
    this.#sweep = database.prepare('DELETE FROM claims WHERE expires_at <= ?')
  }

  claim(input: ClaimInput): Promise<ClaimResult> {
    return gated(this.#gate, this.#database, () => this.#claim.immediate(input))
  }

  /**
   * The claim's decision inside a transaction the caller holds and rolls back (to its savepoint) when this
   * throws: the transactional inbox's delivery. No savepoint of its own, so three statements fewer.
   */
  claimInTransaction(input: ClaimInput): Promise<ClaimResult> {
    return gated(this.#gate, this.#database, () => this.#decide(input))
  }

  complete(ref: ClaimRef, _now: number, result: string | null = null): Promise<boolean> {
    return gated(
      this.#gate,
      this.#database,
      () => this.#complete.run(result, ref.namespace, ref.scope, ref.key, ref.fence).changes === 1,
    )
  }

  async release(ref: ClaimRef): Promise<void> {
    await gated(this.#gate, this.#database, () =>
      this.#release.run(ref.namespace, ref.scope, ref.key, ref.fence),
    )
  }

  async sweep(now: number): Promise<number> {
    return gated(this.#gate, this.#database, () => this.sweepNow(now))
  }

  /** The synchronous sweep, for the single transaction of `SqliteStores.sweep`. */
  sweepNow(now: number): number {
    return this.#sweep.run(now).changes
  }
}
