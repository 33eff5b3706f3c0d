/**
 * The seller's storage of the @adwire/webhooks fire log (what `webhook_activity` joins with the outbox's
 * attempts): one record of kind {@link FIRE_KIND} per fire, owned by the principal it was made for, in the
 * seller's own record table, so that a fire commits in the transaction of the state change it announces.
 */
import type { FireLogStore, FireRecord } from '@adwire/webhooks'
import type { RecordStore } from '../storage/types.js'

/** The record kind of the fire log. */
export const FIRE_KIND = 'webhook_fire'

/**
 * @example
 * const sender = createWebhookSender({ outbox: storage.outbox, fireLog: recordFireLog(storage.records), key })
 */
export function recordFireLog(records: RecordStore): FireLogStore {
  return {
    put: (owner, fire) => records.put(FIRE_KIND, fire.idempotency_key, owner, fire),
    async get(idempotencyKey) {
      const stored = await records.get<FireRecord>(FIRE_KIND, idempotencyKey)
      return stored ? { owner: stored.owner, fire: stored.body } : undefined
    },
  }
}

/** Notes a fire directly (tests and migrations; the sender notes its own). */
export async function recordFire(records: RecordStore, owner: string, fire: FireRecord): Promise<void> {
  await recordFireLog(records).put(owner, fire)
}
