/**
 * Forwards every published event to DOWNSTREAM_URL as a JSON POST. The event row is the queue: it is written
 * pending in the same statement that records the publication, so nothing acknowledged to the seller can be
 * lost; a forwarder leases due rows (one instance per row, even with many instances), posts them, and marks
 * them done on a 2xx, or schedules a retry with exponential back-off (capped, never given up: the event stays
 * pending until the downstream takes it); the lease, retry and back-off are the lease queue's of @adwire/sql.
 * Delivery is at least once: the downstream dedupes on the `Idempotency-Key` header (registration id and the
 * webhook's idempotency_key).
 */
import { backoffSeconds } from '@adwire/sql'
import { every, type Every } from '@adwire/webhooks'
import type { ForwardJob, ReceiverDatabase } from './db/types.js'

export interface ForwarderOptions {
  readonly db: ReceiverDatabase
  readonly url: string
  readonly fetch?: typeof globalThis.fetch
  /** Unix seconds. */
  readonly now?: () => number
  readonly log?: (entry: Record<string, unknown>) => void
  /** How often to look for due events when not kicked, ms. Default 1000. */
  readonly intervalMs?: number
  /** First retry delay, seconds; doubled per attempt up to `maxDelaySeconds`. Default 1. */
  readonly baseDelaySeconds?: number
  readonly maxDelaySeconds?: number
  /** Per-request timeout, ms. Default 10 000. */
  readonly timeoutMs?: number
  readonly batchSize?: number
}

export interface Forwarder {
  start(): void
  /** Looks for due events now (an event was just published). */
  kick(): void
  /** Stops after the batch in progress. */
  stop(): Promise<void>
}

/** The JSON body the downstream receives. */
export function forwardBody(job: ForwardJob) {
  return {
    registration_id: job.registrationId,
    sender: job.sender,
    idempotency_key: job.idempotencyKey,
    operation_id: job.operationId,
    task_id: job.taskId,
    task_type: job.taskType,
    status: job.status,
    terminal: job.terminal,
    received_at: new Date(Math.round(job.receivedAt * 1000)).toISOString(),
    payload: JSON.parse(job.payload) as unknown,
  }
}

/**
 * @example
 * const forwarder = createForwarder({ db, url: 'http://127.0.0.1:9000/events' })
 * forwarder.start()
 * // after each publication: forwarder.kick()
 */
export function createForwarder(options: ForwarderOptions): Forwarder {
  const fetchImpl = options.fetch ?? globalThis.fetch
  const now = options.now ?? (() => Date.now() / 1000)
  const log = options.log ?? (() => {})
  const base = options.baseDelaySeconds ?? 1
  const cap = options.maxDelaySeconds ?? 300
  const timeoutMs = options.timeoutMs ?? 10_000
  const batchSize = options.batchSize ?? 10
  const leaseSeconds = Math.ceil((timeoutMs / 1000) * batchSize) + 30
  let timer: Every | undefined
  let running: Promise<void> | undefined
  let again = false
  let stopped = false

  async function attempt(job: ForwardJob): Promise<void> {
    let error: string
    try {
      const response = await fetchImpl(options.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'idempotency-key': `${job.registrationId}:${job.idempotencyKey}`,
        },
        body: JSON.stringify(forwardBody(job)),
        signal: AbortSignal.timeout(timeoutMs),
      })
      await response.body?.cancel().catch(() => {})
      if (response.ok) {
        if (!(await options.db.markForwarded(job.seq, job.fence, now()))) {
          log({ forwarder: 'lease_lost', seq: job.seq })
        }
        return
      }
      error = `downstream answered ${response.status}`
    } catch (cause) {
      error = `downstream unreachable: ${(cause as Error).message}`
    }
    const delay = backoffSeconds(job.attempts, { baseSeconds: base, capSeconds: cap })
    await options.db.retryForwarding(job.seq, job.fence, now() + delay, error)
    log({
      forwarder: 'retry',
      seq: job.seq,
      attempts: job.attempts + 1,
      error,
      retry_in_s: Math.round(delay),
    })
  }

  async function drain(): Promise<void> {
    for (;;) {
      if (stopped) return
      const jobs = await options.db.leaseForwarding(now(), batchSize, leaseSeconds)
      for (const [index, job] of jobs.entries()) {
        if (stopped) {
          // Give the rest back, so that the next start (or another instance) need not wait for the lease.
          for (const rest of jobs.slice(index)) await options.db.releaseForwarding(rest.seq, rest.fence)
          return
        }
        await attempt(job)
      }
      if (jobs.length < batchSize) return
    }
  }

  function run(): void {
    if (stopped) return
    if (running) {
      again = true
      return
    }
    running = (async () => {
      do {
        again = false
        try {
          await drain()
        } catch (error) {
          log({ forwarder: 'error', error: (error as Error).message })
        }
      } while (again && !stopped)
    })().finally(() => {
      running = undefined
    })
  }

  return {
    start() {
      if (timer || stopped) return
      // Each tick asks for a drain (joining one under way) and waits for it, so ticks never pile up.
      timer = every(() => {
        run()
        return running ?? Promise.resolve()
      }, options.intervalMs ?? 1000)
      run()
    },
    kick: run,
    async stop() {
      stopped = true
      const ticking = timer?.stop()
      timer = undefined
      await ticking
      await running
    },
  }
}
