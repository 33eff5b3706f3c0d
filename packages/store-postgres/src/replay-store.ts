/**
 * {@link ReplayStore} on PostgreSQL: RFC 9421 nonces per keyid until they expire, with the per-keyid entry
 * cap of the AdCP signature checklist (step 9a before any crypto, step 13 atomically with the replay check).
 */
import type { RememberOutcome, ReplayStore } from '@adwire/http-signatures'
import type { Database, Statement } from './database.js'
import { StoreError } from './errors.js'
import { REPLAY_GENERATIONS, maintainGenerations, type GenerationMaintenance } from './generations.js'
import { foldStripes } from './sweep.js'

/** How long a step 9a read may answer for its keyid, ms, and how many keyids are remembered at most. */
const MEMO_MS = 1_000
const MEMO_LIMIT = 10_000

/**
 * Each call is one statement. `remember` runs the `remember_nonce` function (migration 4): the nonce's own
 * primary key decides a replay (concurrent remembers of one nonce wait for each other, of other nonces never),
 * and the keyid's count is the sum of its counter stripes, one per database backend, each written only by its
 * backend; caps of a million entries cost nothing to check below the cap, because the sum is read only every
 * cap / 1,024 inserts of a stripe (every insert below a cap of 1,024), so concurrent writers may pass the cap by
 * a bounded amount (the package README). `atCapacity` reads the sum and, only at the cap, subtracts the
 * keyid's expired rows; far below the cap it answers from memory for a while (see
 * {@link PostgresReplayStore.atCapacity}).
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
  /** Per keyid and cap: how many more step 9a checks may be answered from memory, and until when (ms). */
  readonly #below = new Map<string, { budget: number; until: number }>()

  constructor(database: Database) {
    this.#database = database
    this.#atCapacity = database.statement(
      'replay_at_capacity',
      `SELECT k.entries, CASE WHEN k.entries < $2::bigint THEN false
                   ELSE k.entries - (SELECT count(*) FROM $schema.replay_nonces n
                                      WHERE n.keyid = $1 AND n.expires_at <= $3::float8) >= $2::bigint
              END AS at_capacity
         FROM (SELECT sum(c.entries) AS entries FROM $schema.replay_key_counts c WHERE c.keyid = $1) k
        WHERE k.entries IS NOT NULL`,
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

  /**
   * Step 9a, a cheap early refusal before any cryptography (step 13 in `remember_nonce` is the exact check).
   * Well below the cap a read is not needed for every delivery: after a read finding `entries`, the next
   * `(cap - entries) / 2` checks of that keyid within one second answer false from memory (each check is at
   * most one nonce stored; the halving leaves the rest of the room to other processes). Near the cap every
   * check reads the counter.
   */
  async atCapacity(keyid: string, cap: number, now: number): Promise<boolean> {
    assertCap(cap)
    const memo = `${cap}\u0000${keyid}`
    const below = this.#below.get(memo)
    if (below && below.budget > 0 && performance.now() < below.until) {
      below.budget -= 1
      return false
    }
    const { rows } = await this.#database.run<{ entries: string; at_capacity: boolean }>(this.#atCapacity, [
      keyid,
      cap,
      now,
    ])
    const entries = rows[0] ? Number(rows[0].entries) : 0
    const budget = Math.floor((cap - entries) / 2)
    if (budget > 0) {
      if (this.#below.size >= MEMO_LIMIT) this.#below.clear()
      this.#below.set(memo, { budget, until: performance.now() + MEMO_MS })
    } else this.#below.delete(memo)
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

  /**
   * Expires nonces by dropping whole generations (migration 6; see {@link PostgresClaimStore.sweep}) and folds
   * the counter stripes of gone backends. Resolves with the nonces of the generations dropped.
   */
  async sweep(now: number): Promise<number> {
    const maintenance = await this.maintain(now)
    await foldStripes(this.#database, { counters: 'replay_key_counts', keys: ['keyid'], count: 'entries' })
    return maintenance.rows
  }

  /** The generations' maintenance alone (`generations.ts`), also run on open. */
  maintain(now: number): Promise<GenerationMaintenance> {
    return maintainGenerations(this.#database, REPLAY_GENERATIONS, now)
  }
}

function assertCap(cap: number): void {
  if (!(Number.isSafeInteger(cap) && cap >= 0))
    throw new StoreError('store_invalid_options', `cap must be a non-negative integer, not ${cap}`)
}
