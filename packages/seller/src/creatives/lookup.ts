/** The caller's creatives a set of buys refers to, by id (records of kind `creative`, keyed per owner). */
import type { RecordStore } from '../storage/index.js'
import type { CreativeRecord } from './types.js'

export const CREATIVE_KIND = 'creative'

/**
 * The record id of a caller's creative (creative ids are the buyer's, unique per owner): the owner's length
 * prefix keeps it unambiguous whatever characters either id holds (PostgreSQL text holds no NUL).
 */
export const creativeKey = (owner: string, creativeId: string) => `${owner.length}:${owner}/${creativeId}`

/** The caller's creatives with these ids that exist. */
export async function creativesById(
  records: RecordStore,
  owner: string,
  ids: Iterable<string>,
): Promise<Map<string, CreativeRecord>> {
  const found = new Map<string, CreativeRecord>()
  for (const id of new Set(ids)) {
    const stored = await records.get<CreativeRecord>(CREATIVE_KIND, creativeKey(owner, id))
    if (stored) found.set(id, stored.body)
  }
  return found
}
