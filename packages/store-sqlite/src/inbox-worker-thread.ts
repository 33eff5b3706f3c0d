/**
 * The worker side of {@link createSqliteInboxWorker}: its own connection, the writer module, the inbox, and
 * the messages to and from the caller's thread (a group's answers in one message).
 */
import { parentPort, workerData } from 'node:worker_threads'
import { WebhookError, type InboxDelivery } from '@adwire/webhooks'
import { StoreError } from './errors.js'
import type { CreateInboxWriter, FromWorker, ToWorker, WireError, WireOutcome } from './inbox-worker.js'
import { openSqliteStores } from './open.js'

const port = parentPort!
const options = workerData as {
  path: string
  synchronous?: 'full' | 'normal'
  busyTimeoutMs?: number
  writer: string
  writerData?: unknown
  maxGroup?: number
  durability?: 'pipelined' | 'commit'
}

function toWire(error: unknown): WireError {
  if (error instanceof WebhookError) return { kind: 'webhook', code: error.code, message: error.message }
  if (StoreError.is(error)) return { kind: 'store', code: error.code, message: error.message }
  return { kind: 'other', message: (error as Error)?.message ?? String(error) }
}

let settled: Array<readonly [number, WireOutcome?, WireError?]> = []
let reports: unknown[] = []
let scheduled = false
function post(): void {
  scheduled = false
  if (reports.length > 0) {
    port.postMessage({ reports } satisfies FromWorker)
    reports = []
  }
  if (settled.length > 0) {
    port.postMessage({ settled } satisfies FromWorker)
    settled = []
  }
}
// A group's deliveries settle in one run of the microtask queue (after its WAL sync): queued behind them, one
// message carries the whole group back without waiting for another turn of this thread's event loop.
function schedule(): void {
  if (scheduled) return
  scheduled = true
  queueMicrotask(post)
}

// Attached at once: deliveries sent while the writer loads wait here.
const early: ToWorker[] = []
let handle: ((message: ToWorker) => void) | undefined
port.on('message', (message: ToWorker) => (handle ? handle(message) : early.push(message)))

try {
  const stores = openSqliteStores({
    path: options.path,
    ...(options.synchronous ? { synchronous: options.synchronous } : {}),
    ...(options.busyTimeoutMs !== undefined ? { busyTimeoutMs: options.busyTimeoutMs } : {}),
  })
  const module = (await import(options.writer)) as { createInboxWriter?: CreateInboxWriter }
  if (typeof module.createInboxWriter !== 'function')
    throw new Error(`${options.writer} has no createInboxWriter export`)
  const write = await module.createInboxWriter({
    database: stores.database,
    data: options.writerData,
    report(message) {
      reports.push(message)
      schedule()
    },
  })
  const inbox = stores.createInbox({
    write,
    ...(options.maxGroup ? { maxGroup: options.maxGroup } : {}),
    ...(options.durability ? { durability: options.durability } : {}),
  })
  // Deliveries accepted and not yet settled: a close waits for them (their groups commit and sync first).
  let open = 0
  let closing = false
  let closed = false
  const closeWhenIdle = () => {
    if (!closing || open > 0 || closed) return
    closed = true
    post()
    stores.close()
    port.postMessage({ closed: true } satisfies FromWorker)
  }
  handle = (message) => {
    if ('close' in message) {
      closing = true
      closeWhenIdle()
      return
    }
    for (const [id, delivery] of message.deliveries) {
      open += 1
      const accepted = inbox.accept(delivery as InboxDelivery)
      void accepted
        .finally(() => {
          open -= 1
          // After the settle callbacks below have queued their answers.
          setImmediate(closeWhenIdle)
        })
        .catch(() => {})
      accepted.then(
        (outcome) => {
          settled.push([
            id,
            outcome.kind === 'published'
              ? { kind: 'published', takeover: outcome.event.takeover, reemission: outcome.event.reemission }
              : outcome,
          ])
          schedule()
        },
        (error: unknown) => {
          settled.push([id, undefined, toWire(error)])
          schedule()
        },
      )
    }
  }
  port.postMessage({ ready: true } satisfies FromWorker)
  for (const message of early.splice(0)) handle(message)
} catch (error) {
  port.postMessage({ failed: toWire(error) } satisfies FromWorker)
}
