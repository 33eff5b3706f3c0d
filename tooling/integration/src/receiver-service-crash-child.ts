/**
 * The reference receiver service (the built app, as `node dist/server.js` runs it) with one fault: it dies
 * (SIGKILL, no cleanup) right after its `CRASH_AFTER_RECORDS`-th event row is written, before the receiver
 * core acknowledges the delivery. That is the window in which a retry, after the lease, takes the event over.
 * Usage: node --import tsx receiver-service-crash-child.ts  (env as for the receiver, plus CRASH_AFTER_RECORDS)
 */
import { parseEnv, startReceiver } from '@adwire/app-receiver'

const crashAfter = Number(process.env.CRASH_AFTER_RECORDS)
if (!Number.isInteger(crashAfter) || crashAfter < 1) throw new Error('CRASH_AFTER_RECORDS must be set')
let records = 0
const receiver = await startReceiver(parseEnv(process.env), {
  database: (db) => ({
    ...db,
    async recordEvent(event) {
      const recorded = await db.recordEvent(event)
      records += 1
      if (records === crashAfter) {
        process.stdout.write(`crashing after record ${records}: ${event.idempotencyKey}\n`)
        process.kill(process.pid, 'SIGKILL')
        await new Promise(() => {})
      }
      return recorded
    },
  }),
})
process.stdout.write(`receiver: listening on ${receiver.url}\n`)
