/**
 * {@link ReplayStore} on PostgreSQL: RFC 9421 nonces per keyid until they expire, with the per-keyid entry
 * cap of the AdCP signature checklist (step 9a before any crypto, step 13 atomically with the replay check).
 */
import type { RememberOutcome, ReplayStore } from '@adwire/http-signatures'
import type { Database, Statement } from './database.js'
import { StoreError } from './errors.js'
import { sweepCounted } from './sweep.js'

/**
 * Each call is one statement. `remember` runs the `remember_nonce` function (migration 1), which locks the
 * keyid's counter row, so concurrent remembers of one keyid serialise and the cap is exact; caps of a
 * million entries cost nothing to check below the cap, because the counter is compared, not the rows
 * counted. `atCapacity` reads the counter and, only at the cap, subtracts the keyid's expired rows.
 *
 * @example
 * if (await stores.replay.atCapacity(keyid, 1_000_000, now)) throw rateAbuse()
 * const outcome = await stores.replay.remember(keyid, nonce, expires + 60, 1_000_000, now) // 'stored' | 'replayed' | 'capacity'
 */
export class PostgresReplayStore implements ReplayStore {
  readonly #database: Database
  readonly #atCapacity: Statement
  readonly #seen: Statement
  readonly #remember: Statement

  constructor(database: Database) {
    this.#database = database
    this.#atCapacity = database.statement(
      'replay_at_capacity',
      `SELECT CASE WHEN k.entries < $2::bigint THEN false
                   ELSE k.entries - (SELECT count(*) FROM $schema.replay_nonces n
                                      WHERE n.keyid = $1 AND n.expires_at <= $3::float8) >= $2::bigint
              END AS at_capacity
         FROM $schema.replay_keyids k WHERE k.keyid = $1`,
    )
    this.#seen = database.statement(
      'replay_seen',
      'SELECT EXISTS (SELECT 1 FROM $schema.replay_nonces WHERE keyid = $1 AND nonce = $2 AND expires_at > $3::float8) AS seen',
    )
    this.#remember = database.statement(
      'replay_remember',
      'SELECT $schema.remember_nonce($1, $2, $3, $4, $5) AS outcome',
    )
  }

  async atCapacity(keyid: string, cap: number, now: number): Promise<boolean> {
    assertCap(cap)
    const { rows } = await this.#database.run<{ at_capacity: boolean }>(this.#atCapacity, [keyid, cap, now])
    return rows[0]?.at_capacity ?? cap <= 0
  }

  async seen(keyid: string, nonce: string, now: number): Promise<boolean> {
    const { rows } = await this.#database.run<{ seen: boolean }>(this.#seen, [keyid, nonce, now])
    return rows[0]?.seen ?? false
  }

  async remember(
    keyid: string,
    nonce: string,
    expiresAt: number,
    cap: number,
    now: number,
  ): Promise<RememberOutcome> {
    assertCap(cap)
    const { rows } = await this.#database.run<{ outcome: RememberOutcome }>(this.#remember, [
      keyid,
      nonce,
      expiresAt,
      cap,
      now,
    ])
    const outcome = rows[0]?.outcome
    if (outcome !== 'stored' && outcome !== 'replayed' && outcome !== 'capacity') {
      throw new StoreError('store_query_failed', `remember_nonce returned ${JSON.stringify(outcome)}`)
    }
    return outcome
  }

  /** Deletes nonces expired at `now` (and the counters of keyids left empty); resolves with how many. */
  async sweep(now: number): Promise<number> {
    return sweepCounted(this.#database, now, {
      records: 'replay_nonces',
      counters: 'replay_keyids',
      keys: ['keyid'],
      count: 'entries',
    })
  }
}

function assertCap(cap: number): void {
  if (!(Number.isSafeInteger(cap) && cap >= 0))
    throw new StoreError('store_invalid_options', `cap must be a non-negative integer, not ${cap}`)
}
