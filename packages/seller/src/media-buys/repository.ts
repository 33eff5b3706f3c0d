/**
 * Media buys in storage: load one of the caller's buys (MEDIA_BUY_NOT_FOUND otherwise, also for another
 * caller's), and change one with compare-and-set, retried on a concurrent write, so two instances updating one
 * buy never lose a change.
 */
import { AgentError } from '@adwire/agent-server'
import type { RecordStore, StoredRecord } from '../storage/index.js'
import type { MediaBuyRecord } from './types.js'

export const BUY_KIND = 'media_buy'

/** The caller's buy, or MEDIA_BUY_NOT_FOUND. */
export async function loadBuy(
  records: RecordStore,
  owner: string,
  mediaBuyId: string,
): Promise<StoredRecord<MediaBuyRecord>> {
  const found = await records.get<MediaBuyRecord>(BUY_KIND, mediaBuyId)
  if (!found || found.owner !== owner)
    throw new AgentError('MEDIA_BUY_NOT_FOUND', `no media buy ${mediaBuyId} for this caller`, {
      field: 'media_buy_id',
      status: 404,
    })
  return found
}

/**
 * Applies `change` to the stored buy and writes it back if nobody wrote in between (else reads again and
 * retries). `change` mutates the copy it is given and may throw to refuse; resolves with the stored result and
 * its revision.
 */
export async function mutateBuy<T>(
  records: RecordStore,
  owner: string,
  mediaBuyId: string,
  change: (buy: MediaBuyRecord) => T | Promise<T>,
): Promise<{ buy: MediaBuyRecord; revision: number; result: T }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const stored = await loadBuy(records, owner, mediaBuyId)
    const buy = structuredClone(stored.body)
    const result = await change(buy)
    if (await records.update(BUY_KIND, mediaBuyId, stored.revision, buy))
      return { buy, revision: stored.revision + 1, result }
  }
  throw new AgentError('CONFLICT', `media buy ${mediaBuyId} is being changed concurrently; retry`, {
    status: 409,
    recovery: 'transient',
  })
}
