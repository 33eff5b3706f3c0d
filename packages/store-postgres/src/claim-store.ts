/**
 * {@link ClaimStore} on PostgreSQL: dedup records with publication ownership (webhooks) and request
 * idempotency records (agent tasks), shared by every instance that opens the same schema.
 */
import type { ClaimInput, ClaimRef, ClaimResult, ClaimStore } from '@adwire/webhooks'
import type { Database, Statement } from './database.js'
import { StoreError } from './errors.js'
import { CLAIM_GENERATIONS, maintainGenerations, type GenerationMaintenance } from './generations.js'
import { foldStripes } from './sweep.js'

interface ClaimRow {
  o_outcome: 'claimed' | 'takeover' | 'processing' | 'completed' | 'conflict' | 'capacity'
  o_lease_until: number | null
  o_result: string | null
}

/**
 * Each call is one statement. `claim` is one round trip to the `claim` function (migration 1), which decides
 * under row locks: claimed, takeover after the lease, processing, completed, conflict, capacity (exact under
 * concurrency: new records of one scope serialise on the scope's counter row).
 *
 * @example
 * const result = await stores.claims.claim({ namespace: 'webhook', scope: sender, key, fingerprint, now, leaseSeconds: 30, retentionSeconds: 86_400 })
 * if (result.kind === 'claimed') { await publish(); await stores.claims.complete({ namespace: 'webhook', scope: sender, key, fence: result.fence }, now) }
 */
export class PostgresClaimStore implements ClaimStore {
  readonly #database: Database
  readonly #claim: Statement
  readonly #complete: Statement
  readonly #release: Statement
  readonly #swept: Statement

  constructor(database: Database) {
    this.#database = database
    this.#claim = database.statement(
      'claim',
      'SELECT o_outcome, o_lease_until, o_result FROM $schema.claim($1, $2, $3, $4, $5, $6, $7, $8, $9)',
    )
    this.#complete = database.statement(
      'claim_complete',
      `UPDATE $schema.claims SET result = CASE WHEN state = 'processing' THEN $5 ELSE result END, state = 'completed'
        WHERE namespace = $1 AND scope = $2 AND key = $3 AND fence = $4
          AND expires_at > coalesce((SELECT swept_until FROM $schema.generation_clock WHERE family = 'claims'),
                                    '-Infinity'::float8)`,
    )
    this.#swept = database.statement(
      'claim_swept',
      `UPDATE $schema.generation_clock SET swept_until = greatest(coalesce(swept_until, $1::float8), $1::float8)
        WHERE family = 'claims'`,
    )
    this.#release = database.statement(
      'claim_release',
      `UPDATE $schema.claims SET lease_until = 0
        WHERE namespace = $1 AND scope = $2 AND key = $3 AND fence = $4 AND state = 'processing'`,
    )
  }

  async claim(input: ClaimInput): Promise<ClaimResult> {
    const maxPerScope = input.maxPerScope
    if (maxPerScope !== undefined && !(Number.isSafeInteger(maxPerScope) && maxPerScope >= 0)) {
      throw new StoreError(
        'store_invalid_options',
        `maxPerScope must be a non-negative integer, not ${maxPerScope}`,
      )
    }
    const fence = crypto.randomUUID()
    const { rows } = await this.#database.run<ClaimRow>(this.#claim, [
      input.namespace,
      input.scope,
      input.key,
      input.fingerprint,
      fence,
      input.now,
      input.leaseSeconds,
      input.retentionSeconds,
      maxPerScope ?? null,
    ])
    const row = rows[0]
    switch (row?.o_outcome) {
      case 'claimed':
        return { kind: 'claimed', fence, takeover: false }
      case 'takeover':
        return { kind: 'claimed', fence, takeover: true }
      case 'processing':
        return { kind: 'processing', leaseExpiresAt: row.o_lease_until ?? input.now }
      case 'completed':
        return { kind: 'completed', result: row.o_result }
      case 'conflict':
        return { kind: 'conflict' }
      case 'capacity':
        return { kind: 'capacity' }
      default:
        throw new StoreError('store_query_failed', `claim returned an unexpected row: ${JSON.stringify(row)}`)
    }
  }

  async complete(ref: ClaimRef, _now: number, result: string | null = null): Promise<boolean> {
    const { rowCount } = await this.#database.run(this.#complete, [
      ref.namespace,
      ref.scope,
      ref.key,
      ref.fence,
      result,
    ])
    return rowCount > 0
  }

  async release(ref: ClaimRef): Promise<void> {
    await this.#database.run(this.#release, [ref.namespace, ref.scope, ref.key, ref.fence])
  }

  /**
   * Expires records past their retention by dropping whole generations (migration 6): rotates the current
   * generation when it is due, drops the older ones whose records have all expired, folds the counter stripes
   * of gone backends. Resolves with the records of the generations dropped (a record expired in a generation
   * still holding live ones waits for it, unseen by every decision).
   */
  async sweep(now: number): Promise<number> {
    // A record expired by now is one this sweep deleted until version 5: completing it answers false.
    await this.#database.run(this.#swept, [now])
    const maintenance = await this.maintain(now)
    await foldStripes(this.#database, {
      counters: 'claim_scope_counts',
      keys: ['namespace', 'scope'],
      count: 'records',
    })
    return maintenance.rows
  }

  /** The generations' maintenance alone (`generations.ts`), also run on open. */
  maintain(now: number): Promise<GenerationMaintenance> {
    return maintainGenerations(this.#database, CLAIM_GENERATIONS, now)
  }
}
