/**
 * One sender worker process for outbox.bench.ts: the webhook sender of @adwire/webhooks on the PostgreSQL
 * outbox of @adwire/store-postgres (schema OUTBOX_SCHEMA), leasing due entries with FOR UPDATE SKIP LOCKED.
 * It opens its stores, prints `ready`, starts delivering when a line arrives on stdin, and stops on SIGTERM.
 * Usage: node --import tsx outbox-worker-entry.ts  (env: DATABASE_URL, OUTBOX_SCHEMA, SENDER_KEY, CONCURRENCY)
 */
import { createInterface } from 'node:readline'
import { openPostgresStores } from '@adwire/store-postgres'
import { createWebhookSender } from '@adwire/webhooks'

const stores = await openPostgresStores({
  connectionString: process.env.DATABASE_URL!,
  schema: process.env.OUTBOX_SCHEMA!,
})
const sender = createWebhookSender({
  outbox: stores.outbox,
  key: JSON.parse(process.env.SENDER_KEY!),
  concurrency: Number(process.env.CONCURRENCY ?? 16),
  pollIntervalMs: 5,
  timeoutMs: 10_000,
})
process.stdout.write('ready\n')
const input = createInterface({ input: process.stdin })
input.once('line', () => sender.start())
process.once('SIGTERM', () => {
  input.close()
  void sender
    .stop()
    .then(() => stores.close())
    .then(() => process.exit(0))
})
