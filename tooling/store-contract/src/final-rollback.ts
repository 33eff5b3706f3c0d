/**
 * A final delivery report queued inside a caller's transaction that then rolls back leaves the buy open: the
 * sender's cache of closed buys yields to the outbox, so the buy's next event is queued (and a later final
 * report too), not refused as `webhook_after_final`.
 */
import { generateSigningKey } from '@adwire/http-signatures'
import { createWebhookSender, type OutboxStore, type WebhookRegistration } from '@adwire/webhooks'
import { expect } from 'vitest'
import { report } from './reports.js'

/** What the check needs of a store: its outbox and the caller transaction the outbox joins. */
export interface TransactionalOutbox {
  readonly outbox: OutboxStore
  transaction<T>(body: () => Promise<T>): Promise<T>
}

const finalReport = (mediaBuyId: string) => report(mediaBuyId, 'final')

/**
 * Runs the check on `stores` with the buy `mediaBuyId` (a name no other test of the store uses).
 *
 * @example
 * await expectFinalRollbackReopens(stores, 'mb_rolled_back')
 */
export async function expectFinalRollbackReopens(
  stores: TransactionalOutbox,
  mediaBuyId: string,
): Promise<void> {
  const key = await generateSigningKey({ alg: 'ed25519', kid: `rollback-${mediaBuyId}` })
  const sender = createWebhookSender({ outbox: stores.outbox, key: key.privateJwk })
  const registration: WebhookRegistration = {
    channel: 'adcp',
    config: { url: 'https://buyer.example/hook', operation_id: `op_${mediaBuyId}` },
  }
  const buy = sender.mediaBuy({ mediaBuyId, notifications: registration, reporting: registration })
  try {
    await expect(
      stores.transaction(async () => {
        await buy.finish('completed', finalReport(mediaBuyId))
        throw new Error('the buy change failed after its final report was queued')
      }),
    ).rejects.toThrow('after its final report was queued')
    expect(await stores.outbox.closedMediaBuys([mediaBuyId])).toEqual([])
    const impairment = {
      task_id: `task_${mediaBuyId}`,
      task_type: 'create_media_buy',
      status: 'completed',
      notification_id: `imp_${mediaBuyId}`,
      message: 'creative suspended',
    }
    await expect(buy.impairment(impairment, { key: 'creative:1' })).resolves.toEqual(expect.any(String))
    await expect(buy.finish('completed', finalReport(mediaBuyId))).resolves.toEqual(expect.any(String))
    expect(await stores.outbox.closedMediaBuys([mediaBuyId])).toEqual([mediaBuyId])
    await expect(
      buy.impairment({ ...impairment, notification_id: 'late' }, { key: 'creative:2' }),
    ).rejects.toMatchObject({
      code: 'webhook_after_final',
    })
  } finally {
    await sender.stop()
  }
}
