/**
 * capabilities.changed, fired once per new capability snapshot: when the agent serves (so the new snapshot is
 * readable through get_adcp_capabilities), the snapshot's `capabilities_version` is compared with the last one
 * announced, kept in the records; a different one is claimed by compare-and-set (one instance of several on
 * one database fires it) and announced to the agent-level configs. The first snapshot an agent ever serves is
 * recorded without a fire: nobody had an older one cached.
 */
import type { RecordStore } from '../storage/types.js'
import type { SellerEvents } from './seller-events.js'

const KIND = 'capabilities_announcement'
const ID = 'current'

interface Announcement {
  readonly capabilities_version: string
}

/** Announces `version` if it is new; resolves with whether this call fired capabilities.changed. */
export async function announceCapabilities(
  records: RecordStore,
  events: Pick<SellerEvents, 'capabilitiesChanged'>,
  version: string,
): Promise<boolean> {
  const stored = await records.get<Announcement>(KIND, ID)
  if (!stored) {
    await records.insert(KIND, ID, '', { capabilities_version: version } satisfies Announcement)
    return false
  }
  if (stored.body.capabilities_version === version) return false
  if (
    !(await records.update(KIND, ID, stored.revision, {
      capabilities_version: version,
    } satisfies Announcement))
  )
    return false
  await events.capabilitiesChanged(version)
  return true
}
