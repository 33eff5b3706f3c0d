/**
 * capabilities.changed: once an instance serves its snapshot (get_adcp_capabilities answers with it), it compares
 * the snapshot's `capabilities_version` with the last one announced (record kind `capabilities`, shared by every
 * instance on the database) and, when it differs, records the new one and tells the event seam, so
 * `capabilitiesChanged` fires once per change across instances and restarts, after the snapshot is readable.
 */
import type { SellerEvents } from './events/seller-events.js'
import type { RecordStore } from './storage/index.js'

const KIND = 'capabilities'
const ID = 'announced'

/**
 * Resolves with whether this call announced `version`.
 *
 * @example
 * await announceCapabilities(storage.records, events, deps.capabilitiesVersion)
 */
export async function announceCapabilities(
  records: RecordStore,
  events: SellerEvents,
  version: string,
): Promise<boolean> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const stored = await records.get<{ capabilities_version: string }>(KIND, ID)
    if (stored?.body.capabilities_version === version) return false
    const body = { capabilities_version: version, announced_at: new Date().toISOString() }
    // The new version and its capabilities.changed pushes commit together.
    const won = await records.transaction(async () => {
      const stored_ = stored
        ? await records.update(KIND, ID, stored.revision, body)
        : await records.insert(KIND, ID, '', body)
      if (stored_) await events.capabilitiesChanged(version)
      return stored_
    })
    if (won) return true
  }
  return false
}
