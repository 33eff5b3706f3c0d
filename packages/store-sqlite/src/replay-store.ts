/**
 * {@link ReplayStore} on SQLite: one row per `(keyid, nonce)` until swept. `remember` is one IMMEDIATE transaction
 * (replay check, cap check, store), so that two processes verifying the same signature never both store it.
 * A keyid never holds more than the cap in rows, expired or not: at the cap `remember` deletes the keyid's
 * expired rows before deciding. The cap comes from the verifier (by default a rate: 5,000 webhooks a second
 * per key, 2,100,000 rows).
 */
import type Database from 'better-sqlite3'
import type { RememberOutcome, ReplayStore } from '@adwire/http-signatures'
import { gated, WriteGate } from './transaction.js'

export class SqliteReplayStore implements ReplayStore {
  readonly #database: Database.Database
  readonly #gate: WriteGate
  readonly #entries: Database.Statement<[keyid: string], number>
  readonly #expired: Database.Statement<[keyid: string, now: number], number>
  readonly #seen: Database.Statement<[keyid: string, nonce: string, now: number], number>
  readonly #remember: Database.Transaction<
    (keyid: string, nonce: string, expiresAt: number, cap: number, now: number) => RememberOutcome
  >
  readonly #decide: (
    keyid: string,
    nonce: string,
    expiresAt: number,
    cap: number,
    now: number,
  ) => RememberOutcome
  readonly #sweep: Database.Statement<[now: number]>

  constructor(database: Database.Database, gate: WriteGate = new WriteGate()) {
    this.#gate = gate
    this.#database = database
    this.#entries = database
      .prepare<[keyid: string], number>('SELECT entries FROM replay_keyids WHERE keyid = ?')
      .pluck()
    this.#expired = database
      .prepare<[keyid: string, now: number], number>(
        'SELECT count(*) FROM replay_nonces WHERE keyid = ? AND expires_at <= ?',
      )
      .pluck()
    this.#seen = database
      .prepare<[keyid: string, nonce: string, now: number], number>(
        'SELECT 1 FROM replay_nonces WHERE keyid = ? AND nonce = ? AND expires_at > ?',
      )
      .pluck()
    const upsert = database.prepare<[keyid: string, nonce: string, expiresAt: number]>(
      `INSERT INTO replay_nonces (keyid, nonce, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (keyid, nonce) DO UPDATE SET expires_at = excluded.expires_at`,
    )
    const dropExpired = database.prepare<[keyid: string, now: number]>(
      'DELETE FROM replay_nonces WHERE keyid = ? AND expires_at <= ?',
    )
    // Below the cap, one statement decides: a new nonce (or an expired one) is stored and returns its row; a
    // live one conflicts, changes nothing and returns none (replayed).
    const storeUnlessLive = database
      .prepare<[keyid: string, nonce: string, expiresAt: number, now: number], number>(
        `INSERT INTO replay_nonces (keyid, nonce, expires_at) VALUES (?, ?, ?)
         ON CONFLICT (keyid, nonce) DO UPDATE SET expires_at = excluded.expires_at
           WHERE replay_nonces.expires_at <= ?
         RETURNING 1`,
      )
      .pluck()
    this.#decide = (
      keyid: string,
      nonce: string,
      expiresAt: number,
      cap: number,
      now: number,
    ): RememberOutcome => {
      // Stored rows (live or not) below the cap: the cap cannot be reached by this one.
      if ((this.#entries.get(keyid) ?? 0) < cap)
        return storeUnlessLive.get(keyid, nonce, expiresAt, now) === undefined ? 'replayed' : 'stored'
      if (this.#seen.get(keyid, nonce, now) !== undefined) return 'replayed'
      if ((this.#entries.get(keyid) ?? 0) >= cap) {
        // At the cap in stored rows: drop the keyid's expired ones first (as PostgreSQL's remember_nonce
        // does), so that a keyid never holds more than `cap` rows even between sweeps.
        dropExpired.run(keyid, now)
        if ((this.#entries.get(keyid) ?? 0) >= cap) return 'capacity'
      }
      // Replaces an expired entry of the same nonce, if any.
      upsert.run(keyid, nonce, expiresAt)
      return 'stored'
    }
    this.#remember = database.transaction(this.#decide)
    this.#sweep = database.prepare('DELETE FROM replay_nonces WHERE expires_at <= ?')
  }

  atCapacity(keyid: string, cap: number, now: number): Promise<boolean> {
    return gated(this.#gate, this.#database, () => this.#full(keyid, cap, now))
  }

  /**
   * Whether the keyid's live entries reach `cap`. Live entries ≤ stored entries (kept by a trigger), so only a
   * keyid with enough stored entries needs its expired, not yet swept ones counted.
   */
  #full(keyid: string, cap: number, now: number): boolean {
    const entries = this.#entries.get(keyid) ?? 0
    return entries >= cap && entries - (this.#expired.get(keyid, now) ?? 0) >= cap
  }

  seen(keyid: string, nonce: string, now: number): Promise<boolean> {
    return gated(this.#gate, this.#database, () => this.#seen.get(keyid, nonce, now) !== undefined)
  }

  remember(
    keyid: string,
    nonce: string,
    expiresAt: number,
    cap: number,
    now: number,
  ): Promise<RememberOutcome> {
    return gated(this.#gate, this.#database, () =>
      this.#remember.immediate(keyid, nonce, expiresAt, cap, now),
    )
  }

  /**
   * `remember` inside a transaction the caller holds and rolls back (to its savepoint) when this throws: the
   * transactional inbox's delivery. No savepoint of its own.
   */
  rememberInTransaction(
    keyid: string,
    nonce: string,
    expiresAt: number,
    cap: number,
    now: number,
  ): Promise<RememberOutcome> {
    return gated(this.#gate, this.#database, () => this.#decide(keyid, nonce, expiresAt, cap, now))
  }

  /** Deletes the entries that expired by `now`; resolves with how many. */
  async sweep(now: number): Promise<number> {
    return gated(this.#gate, this.#database, () => this.sweepNow(now))
  }

  /** The synchronous sweep, for the single transaction of `SqliteStores.sweep`. */
  sweepNow(now: number): number {
    return this.#sweep.run(now).changes
  }
}
