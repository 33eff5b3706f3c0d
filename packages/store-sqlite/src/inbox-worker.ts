/**
 * The transactional inbox on a worker thread: the same inbox as {@link SqliteStores.createInbox} (group
 * commit, a failed delivery rolled back alone, pipelined WAL sync), run on its own connection to the file in a
 * `node:worker_threads` worker, so that the statements and the COMMIT of each group (writing the WAL frames of
 * every page the group dirtied) no longer run on the caller's event loop, which meanwhile parses, verifies and
 * answers the next deliveries. The event writer runs in the worker too, on the worker's connection, inside the
 * delivery's transaction: it is a module the worker imports (`writer`), not a function, since a function
 * cannot cross to another thread.
 */
import { Worker } from 'node:worker_threads'
import type Database from 'better-sqlite3'
import {
  WebhookError,
  type DeliveryInbox,
  type InboxDelivery,
  type InboxOutcome,
  type ReceivedEvent,
} from '@adwire/webhooks'
import { StoreError, type StoreErrorCode } from './errors.js'

/** What the worker's writer module is given. */
export interface InboxWriterContext<Data = unknown> {
  /** The worker's connection (the inbox's transaction is open on it while the writer runs). */
  readonly database: Database.Database
  /** `writerData` as given to {@link createSqliteInboxWorker} (structured-cloned). */
  readonly data: Data
  /** Sends `message` (structured-cloned) to `onReport` on the caller's thread: for logs. */
  report(message: unknown): void
}

/**
 * The event as the worker's writer sees it: every field of {@link ReceivedEvent} but the parsed `payload`
 * and `data`, which are not sent across (the raw `body` is).
 */
export type WorkerEvent = Omit<ReceivedEvent, 'payload' | 'data'>

/**
 * The export the writer module must have: given the worker's connection, the writer of one published event,
 * synchronous statements only (the transaction stays open while it runs; throwing rolls the delivery back).
 */
export type CreateInboxWriter<Data = unknown> = (
  context: InboxWriterContext<Data>,
) => ((event: WorkerEvent) => void | Promise<void>) | Promise<(event: WorkerEvent) => void | Promise<void>>

export interface SqliteInboxWorkerOptions {
  /** The database file, already opened (and so migrated) once by {@link openSqliteStores} in this process. */
  readonly path: string
  readonly synchronous?: 'full' | 'normal'
  readonly busyTimeoutMs?: number
  /**
   * The writer module, as a `file:` URL or an absolute path: its export `createInboxWriter` (a
   * {@link CreateInboxWriter}) is called once in the worker.
   */
  readonly writer: URL | string
  /** Given to `createInboxWriter` as `context.data` (structured-cloned: plain data only). */
  readonly writerData?: unknown
  /** Most deliveries in one transaction (default 256). */
  readonly maxGroup?: number
  /** As {@link SqliteInboxOptions.durability} (default `'pipelined'`). */
  readonly durability?: 'pipelined' | 'commit'
  /** Receives what the writer `report`s, on the caller's thread. */
  readonly onReport?: (message: unknown) => void
  /**
   * Node options of the worker thread (`['--import', 'tsx']` for a TypeScript writer, as in tests run from the
   * sources). Default none.
   */
  readonly execArgv?: readonly string[]
}

/** A delivery's outcome as the worker sends it back: a published event by its two decided flags only. */
export type WireOutcome =
  | Exclude<InboxOutcome, { kind: 'published' }>
  | { readonly kind: 'published'; readonly takeover: boolean; readonly reemission: boolean }

/** An error as the worker sends it back. */
export interface WireError {
  readonly kind: 'webhook' | 'store' | 'other'
  readonly code?: string
  readonly message: string
}

/** Caller → worker. */
export type ToWorker =
  | { readonly deliveries: ReadonlyArray<readonly [id: number, delivery: WireDelivery]> }
  | { readonly close: true }

/** A delivery as it crosses: its event without the parsed payload. */
export type WireDelivery = Omit<InboxDelivery, 'event'> & {
  readonly event: Omit<InboxDelivery['event'], 'payload' | 'data'>
}

/** Worker → caller. */
export type FromWorker =
  | { readonly ready: true }
  | { readonly failed: WireError }
  | { readonly settled: ReadonlyArray<readonly [id: number, outcome?: WireOutcome, error?: WireError]> }
  | { readonly reports: readonly unknown[] }
  | { readonly closed: true }

/** The error a caller sees for `wire`. */
export function fromWire(wire: WireError): Error {
  if (wire.kind === 'webhook') return new WebhookError(wire.code as never, wire.message)
  if (wire.kind === 'store') return new StoreError(wire.code as StoreErrorCode, wire.message)
  return new Error(wire.message)
}

interface Waiting {
  readonly delivery: InboxDelivery
  readonly resolve: (outcome: InboxOutcome) => void
  readonly reject: (error: unknown) => void
}

/** One running worker: the deliveries it holds, and how to send it more and close it. */
interface Running {
  readonly waiting: Map<number, Waiting>
  send(id: number, delivery: WireDelivery): void
  close(): Promise<void>
}

/**
 * Starts the worker (resolving once its connection and writer are ready) and returns the inbox. If the worker
 * ever fails or exits, the deliveries it held are refused with `store_unavailable` (none of them was
 * acknowledged: whatever it had not committed is rolled back with its connection, and the senders retry) and
 * the next delivery starts a new one.
 *
 * @throws {StoreError} `store_unavailable` when the worker cannot open the file or load the writer.
 * @example
 * const stores = openSqliteStores({ path })            // opens and migrates the file
 * const inbox = await createSqliteInboxWorker({ path, writer: new URL('./writer.js', import.meta.url) })
 * const receiver = createWebhookReceiver({ registration, claims: stores.claims,
 *   convergence: stores.convergence, replayStore: stores.replay, inbox })
 * await inbox.close()
 */
export async function createSqliteInboxWorker(
  options: SqliteInboxWorkerOptions,
): Promise<DeliveryInbox & { close(): Promise<void> }> {
  let running: Promise<Running> | undefined = start(options)
  await running
  let closed = false
  let nextId = 1
  return {
    async accept(delivery) {
      if (closed) throw new StoreError('store_closed', 'the inbox worker was closed')
      running ??= start(options)
      const current = running
      let worker: Running
      try {
        worker = await current
      } catch (error) {
        if (running === current) running = undefined
        throw error
      }
      return new Promise<InboxOutcome>((resolve, reject) => {
        const id = nextId++
        worker.waiting.set(id, { delivery, resolve, reject })
        const { payload: _payload, data: _data, ...event } = delivery.event
        worker.send(id, { ...delivery, event })
      }).catch((error: unknown) => {
        // A worker that failed is replaced at the next delivery.
        if (running === current && StoreError.is(error) && error.code === 'store_unavailable')
          running = undefined
        throw error
      })
    },
    async close() {
      if (closed) return
      closed = true
      const current = running
      running = undefined
      const worker = await current?.catch(() => undefined)
      await worker?.close()
    },
  }
}

function start(options: SqliteInboxWorkerOptions): Promise<Running> {
  // From the sources (this package's tests), the thread's TypeScript runs under tsx.
  const source = import.meta.url.endsWith('.ts')
  const execArgv = [...(options.execArgv ?? [])]
  if (source && !execArgv.includes('tsx')) execArgv.push('--import', 'tsx')
  const worker = new Worker(
    new URL(source ? './inbox-worker-thread.ts' : './inbox-worker-thread.js', import.meta.url),
    {
      ...(execArgv.length > 0 ? { execArgv } : {}),
      workerData: {
        path: options.path,
        synchronous: options.synchronous,
        busyTimeoutMs: options.busyTimeoutMs,
        writer: String(options.writer),
        writerData: options.writerData,
        maxGroup: options.maxGroup,
        durability: options.durability,
      },
    },
  )
  // The caller's server keeps the process alive; an idle inbox does not.
  worker.unref()
  const waiting = new Map<number, Waiting>()
  let outgoing: Array<readonly [number, WireDelivery]> = []
  let scheduled = false
  let gone: Error | undefined
  let onClosed: (() => void) | undefined

  function failAll(error: Error): void {
    gone ??= error
    for (const entry of waiting.values()) entry.reject(gone)
    waiting.clear()
  }
  function flush(): void {
    scheduled = false
    const deliveries = outgoing
    outgoing = []
    if (gone || deliveries.length === 0) return
    worker.postMessage({ deliveries } satisfies ToWorker)
  }

  return new Promise<Running>((resolve, reject) => {
    worker.on('message', (message: FromWorker) => {
      if ('settled' in message) {
        for (const [id, outcome, error] of message.settled) {
          const entry = waiting.get(id)
          if (!entry) continue
          waiting.delete(id)
          if (error) entry.reject(fromWire(error))
          else if (outcome!.kind === 'published')
            entry.resolve({
              kind: 'published',
              event: {
                ...entry.delivery.event,
                takeover: outcome!.takeover,
                reemission: outcome!.reemission,
              },
            })
          else entry.resolve(outcome!)
        }
      } else if ('reports' in message) {
        for (const report of message.reports) {
          try {
            options.onReport?.(report)
          } catch {
            // A failing log callback must not cost a delivery.
          }
        }
      } else if ('ready' in message) {
        resolve({
          waiting,
          send(id, delivery) {
            if (gone) {
              waiting.get(id)?.reject(gone)
              waiting.delete(id)
              return
            }
            outgoing.push([id, delivery])
            if (!scheduled) {
              scheduled = true
              setImmediate(flush)
            }
          },
          async close() {
            if (gone) return
            const done = new Promise<void>((settle) => (onClosed = settle))
            // The deliveries still waiting for this turn's message go first: the worker settles them, then closes.
            if (scheduled) flush()
            worker.postMessage({ close: true } satisfies ToWorker)
            await done
            failAll(new StoreError('store_closed', 'the inbox worker was closed'))
            await worker.terminate()
          },
        })
      } else if ('failed' in message) {
        const wire = message.failed
        const error =
          wire.kind === 'store'
            ? fromWire(wire)
            : new StoreError('store_unavailable', `the inbox worker could not start: ${wire.message}`)
        failAll(error)
        reject(error)
        void worker.terminate()
      } else if ('closed' in message) onClosed?.()
    })
    worker.once('error', (error) => {
      const failure = new StoreError('store_unavailable', `the inbox worker failed: ${error.message}`, {
        cause: error,
      })
      failAll(failure)
      reject(failure)
    })
    worker.once('exit', (code) => {
      const failure = new StoreError('store_unavailable', `the inbox worker stopped (exit code ${code})`)
      failAll(failure)
      reject(failure)
      onClosed?.()
    })
  })
}
