/**
 * The event writer of the SQLite inbox worker (`createSqliteInboxWorker` of @adwire/store-sqlite): the
 * receiver's tables opened on the worker's connection, and each published event recorded in the delivery's
 * transaction there, its log line reported back to the service's thread.
 */
import type { CreateInboxWriter } from '@adwire/store-sqlite'
import { eventRow, recordedLog } from '../event-row.js'
import { openReceiverDatabase } from './database.js'

/** What the service sends the worker. */
export interface InboxWriterData {
  readonly forwarding: boolean
  readonly eventRetentionSeconds?: number
}

export const createInboxWriter: CreateInboxWriter<InboxWriterData> = async ({ database, data, report }) => {
  const db = await openReceiverDatabase(
    { kind: 'sqlite', database },
    data.eventRetentionSeconds ? { eventRetentionSeconds: data.eventRetentionSeconds } : {},
  )
  return async (event) => {
    const entry = recordedLog(event, await db.recordEvent(eventRow(event, data.forwarding)))
    if (entry) report(entry)
  }
}
