/**
 * A seller process that dies (SIGKILL, no cleanup) after the sender accepted an event, for the sender
 * durability tests. Usage: node --import tsx sender-crash-child.ts <config.json>
 * config: { store: { kind: 'sqlite', path } | { kind: 'postgres', url, schema }, key, url, mode, leaseSeconds, timeoutMs }
 * - mode `enqueue`: notify, print `enqueued <key>`, then kill itself before any delivery;
 * - mode `inflight`: notify, print `enqueued <key>`, start the worker and wait to be killed mid-attempt.
 */
import { readFileSync } from 'node:fs'
import { openPostgresStores } from '@adwire/store-postgres'
import { openSqliteStores } from '@adwire/store-sqlite'
import { createWebhookSender } from '@adwire/webhooks'

const config = JSON.parse(readFileSync(process.argv[2]!, 'utf8'))
const stores =
  config.store.kind === 'sqlite'
    ? openSqliteStores({ path: config.store.path })
    : await openPostgresStores({ connectionString: config.store.url, schema: config.store.schema })
const sender = createWebhookSender({
  outbox: stores.outbox,
  key: config.key,
  leaseSeconds: config.leaseSeconds,
  timeoutMs: config.timeoutMs,
  pollIntervalMs: 50,
})
const idempotencyKey = await sender.notify(
  { channel: 'adcp', config: { url: config.url, operation_id: 'op_crash' }, context: { run: 'crash' } },
  {
    task_id: 'task_crash',
    task_type: 'create_media_buy',
    status: 'completed',
    result: { media_buy_id: 'mb_1' },
  },
)
process.stdout.write(`enqueued ${idempotencyKey}\n`)
if (config.mode === 'enqueue') {
  process.kill(process.pid, 'SIGKILL')
} else {
  sender.start()
}
await new Promise(() => undefined)
