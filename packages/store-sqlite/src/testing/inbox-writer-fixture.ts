/**
 * The writer module of the inbox worker tests (inbox-worker.test.ts): records each published event in a table
 * `worker_events` it creates, reports each recording, and fails on demand (a key ending in `-bad` throws after
 * its row is written; a key ending in `-crash` ends the worker thread mid-transaction).
 */
import type { CreateInboxWriter } from '../inbox-worker.js'

export const createInboxWriter: CreateInboxWriter<{ readonly table: string }> = ({
  database,
  data,
  report,
}) => {
  database.exec(
    `CREATE TABLE IF NOT EXISTS ${data.table} (key TEXT PRIMARY KEY, body TEXT NOT NULL, takeover INTEGER NOT NULL)`,
  )
  const insert = database.prepare(`INSERT INTO ${data.table} (key, body, takeover) VALUES (?, ?, ?)`)
  return (event) => {
    insert.run(event.idempotencyKey, new TextDecoder().decode(event.body), event.takeover ? 1 : 0)
    report({ recorded: event.idempotencyKey, hasPayload: 'payload' in event })
    if (event.idempotencyKey.endsWith('-bad')) throw new Error('the writer failed')
    if (event.idempotencyKey.endsWith('-crash')) process.exit(3)
  }
}
