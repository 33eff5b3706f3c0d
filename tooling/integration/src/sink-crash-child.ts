/**
 * The reference receiver service (the built app, as `node dist/server.js` runs it) with a short relay lease:
 * a receiver killed while it holds a batch of events leased for publication leaves them to the other
 * instance after `RELAY_LEASE_SECONDS` (default 3) instead of the service's 130 s, so that sink-crash.test.ts
 * need not wait. Everything else (the store, the inbox, the sink SINK_URL names, the relay) is the service's own.
 * Usage: node --import tsx sink-crash-child.ts  (env as for the receiver, plus RELAY_LEASE_SECONDS)
 */
import { parseEnv, startReceiver } from '@adwire/app-receiver'

const receiver = await startReceiver(parseEnv(process.env), {
  forwarder: { leaseSeconds: Number(process.env.RELAY_LEASE_SECONDS ?? 3), intervalMs: 100 },
})
process.stdout.write(`receiver: listening on ${receiver.url}\n`)
