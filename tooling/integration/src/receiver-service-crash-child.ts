/**
 * The reference receiver service (the built app, as `node dist/server.js` runs it) with one fault: it dies
 * (SIGKILL, no cleanup) right after its `CRASH_AFTER_RECORDS`-th event row is written, before the receiver
 * core acknowledges the delivery. That is the window in which a retry, after the lease, takes the event over.
 * With the transactional inbox (the default) the row is written inside the delivery's open transaction, so the
 * kill leaves nothing behind; `CRASH_PUBLICATION=claims` selects claim → publish → complete, where the row is
 * committed and the claim left open.
 * Usage: node --import tsx receiver-service-crash-child.ts  (env as for the receiver, plus CRASH_AFTER_RECORDS)
 */
import { parseEnv, startReceiver } from '@adwire/app-receiver'

const crashAfter = Number(process.env.CRASH_AFTER_RECORDS)
if (!Number.isInteger(crashAfter) || crashAfter < 1) throw new Error('CRASH_AFTER_RECORDS must be set')
let records = 0
const receiver = await startReceiver(parseEnv(process.env), {
  ...(process.env.CRASH_PUBLICATION === 'claims' ? { publication: 'claims' as const } : {}),
  database: (db) => ({
    ...db,
    async recordEvent(event, transaction) {
      const recorded = await db.recordEvent(event, transaction)
      await counted(event.idempotencyKey)
      return recorded
    },
    // PostgreSQL inbox groups write their events at once: each counts.
    async recordEvents(events, transaction) {
      const recorded = await db.recordEvents(events, transaction)
      for (const event of events) await counted(event.idempotencyKey)
      return recorded
    },
  }),
})

/** Counts a written row; the `CRASH_AFTER_RECORDS`-th kills the process before anything is acknowledged. */
async function counted(key: string): Promise<void> {
  records += 1
  if (records !== crashAfter) return
  process.stdout.write(`crashing after record ${records}: ${key}\n`)
  process.kill(process.pid, 'SIGKILL')
  await new Promise(() => {})
}
process.stdout.write(`receiver: listening on ${receiver.url}\n`)
