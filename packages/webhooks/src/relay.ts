/**
 * The relay: a transactional outbox from a receiver's store into a {@link Sink}. The store writes each accepted
 * event `pending` in the statement that accepts it; the relay leases due events (fenced, so one instance owns
 * each), publishes a batch in one `sink.publish`, marks the confirmed ones published and schedules the refused
 * ones again with exponential back-off (capped, never given up). A publish that rejects (the broker is down)
 * counts as every message refused. Nothing here answers the webhook's sender: the event was accepted before.
 * After a crash between the publish and the mark, the lease expires and the event is published again with the
 * same message id ({@link sinkMessageId}), which a consumer dedupes on.
 */
import { every, type Every } from './every.js'
import { backoffSeconds } from './sender/retry.js'
import { relayMessage, type RelayEvent } from './relay-message.js'
import type { Sink, SinkOutcome } from './sink.js'

/** How many events wait, and since when the oldest. */
export interface RelayBacklog {
  readonly count: number
  /** Unix seconds: `receivedAt` of the oldest pending event; absent when none waits. */
  readonly oldestReceivedAt?: number
}

/**
 * The queue the relay drains, implemented by the receiver's store (its event rows are the queue). Every
 * method taking a fence is a no-op (false) when that lease was lost.
 */
export interface RelaySource {
  /** Leases up to `limit` events due at `now` (pending, due, not leased by anyone alive), oldest first. */
  lease(now: number, limit: number, leaseSeconds: number): Promise<readonly RelayEvent[]>
  /** Marks a leased event published; false when the lease was lost. */
  markPublished(seq: number, fence: string, now: number): Promise<boolean>
  /**
   * Optional: marks many leased events published in one statement or transaction (one commit a batch instead
   * of one an event); resolves with whether each lease was still held, in the order given.
   */
  markPublishedMany?(
    events: readonly { readonly seq: number; readonly fence: string }[],
    now: number,
  ): Promise<readonly boolean[]>
  /** Schedules another attempt at `nextAttemptAt` (Unix seconds) and records `error`; false when lost. */
  retry(seq: number, fence: string, nextAttemptAt: number, error: string): Promise<boolean>
  /** Gives a leased event back unattempted (the relay is stopping). */
  release(seq: number, fence: string): Promise<void>
  /** The pending events: the relay's lag. */
  backlog(): Promise<RelayBacklog>
}

export interface RelayOptions {
  readonly source: RelaySource
  readonly sink: Sink
  /** Unix seconds. */
  readonly now?: () => number
  readonly log?: (entry: Record<string, unknown>) => void
  /** Events per publish. Default 10. */
  readonly batchSize?: number
  /** How often to look for due events when not kicked, ms. Default 1000. */
  readonly intervalMs?: number
  /** First retry delay, seconds; doubled per attempt up to `maxDelaySeconds` (default 300). Default 1. */
  readonly baseDelaySeconds?: number
  readonly maxDelaySeconds?: number
  /** How long a lease lasts: longer than a publish of a batch may take, seconds. Default 120. */
  readonly leaseSeconds?: number
  /** Jitter of the back-off, [0, 1). Default `Math.random`. */
  readonly random?: () => number
}

/** What `/health` and the receiver's page show of a relay. */
export interface RelayStatus {
  /** The sink's kind (`rabbitmq`, `redis`, `nats`, `http`). */
  readonly sink: string
  /** Events accepted and not yet confirmed by the sink: the lag. */
  readonly pending: number
  /** Seconds since the oldest pending event was accepted; null when none waits. */
  readonly oldestPendingSeconds: number | null
  /** Events this relay has seen confirmed since it started. */
  readonly published: number
  /** The latest refusal or failure, with its time (Unix seconds); null when none since the start. */
  readonly lastError: { readonly message: string; readonly at: number } | null
}

export interface Relay {
  start(): void
  /** Looks for due events now (an event was just accepted). */
  kick(): void
  /** {@link Relay.kick}, resolving once the pass (and any it joined) has ended. */
  drain(): Promise<void>
  /** Stops after the batch in progress; leased events not yet published are given back. */
  stop(): Promise<void>
  status(): Promise<RelayStatus>
}

/**
 * @example
 * const relay = createRelay({ source: receiverQueue(db), sink: await sinkFromUrl(env.sinkUrl) })
 * relay.start()
 * // after each accepted event: relay.kick(); for /health: await relay.status()
 * await relay.stop()
 */
export function createRelay(options: RelayOptions): Relay {
  const { source, sink } = options
  const now = options.now ?? (() => Date.now() / 1000)
  const log = options.log ?? (() => {})
  const batchSize = options.batchSize ?? 10
  const leaseSeconds = options.leaseSeconds ?? 120
  const policy = {
    baseDelaySeconds: options.baseDelaySeconds ?? 1,
    maxDelaySeconds: options.maxDelaySeconds ?? 300,
    jitter: 0.25,
  }
  const random = options.random ?? Math.random
  let timer: Every | undefined
  let running: Promise<void> | undefined
  let again = false
  let stopped = false
  let published = 0
  let lastError: RelayStatus['lastError'] = null

  async function publish(events: readonly RelayEvent[]): Promise<readonly SinkOutcome[]> {
    try {
      const outcomes = await sink.publish(await Promise.all(events.map(relayMessage)))
      return events.map((_, index) => outcomes[index] ?? { ok: false, error: `${sink.kind}: no outcome` })
    } catch (cause) {
      const error = `${sink.kind} unavailable: ${cause instanceof Error ? cause.message : String(cause)}`
      return events.map(() => ({ ok: false, error }))
    }
  }

  /** Marks the confirmed events published: in one call when the source can, else one by one. */
  async function markConfirmed(events: readonly RelayEvent[]): Promise<void> {
    if (events.length === 0) return
    const marked = source.markPublishedMany
      ? await source.markPublishedMany(events, now())
      : await (async () => {
          const out: boolean[] = []
          for (const event of events) out.push(await source.markPublished(event.seq, event.fence, now()))
          return out
        })()
    for (const [index, event] of events.entries()) {
      if (marked[index]) published += 1
      else log({ relay: 'lease_lost', sink: sink.kind, seq: event.seq })
    }
  }

  async function refused(event: RelayEvent, outcome: Extract<SinkOutcome, { ok: false }>): Promise<void> {
    const at = now()
    lastError = { message: outcome.error, at }
    const delay = backoffSeconds(event.attempts + 1, policy, random)
    await source.retry(event.seq, event.fence, at + delay, outcome.error)
    log({
      relay: 'retry',
      sink: sink.kind,
      seq: event.seq,
      attempts: event.attempts + 1,
      error: outcome.error,
      retry_in_s: Math.round(delay),
    })
  }

  async function drain(): Promise<void> {
    for (;;) {
      if (stopped) return
      const events = await source.lease(now(), batchSize, leaseSeconds)
      if (events.length === 0) return
      if (stopped) {
        // Given back, so that the next start (or another instance) need not wait for the lease.
        for (const event of events) await source.release(event.seq, event.fence)
        return
      }
      const outcomes = await publish(events)
      await markConfirmed(events.filter((_, index) => outcomes[index]!.ok))
      for (const [index, event] of events.entries()) {
        const outcome = outcomes[index]!
        if (!outcome.ok) await refused(event, outcome)
      }
      if (events.length < batchSize) return
    }
  }

  function run(): void {
    if (stopped) return
    if (running) {
      again = true
      return
    }
    running = passes()
  }

  /** Drains until no kick arrived meanwhile; `running` is cleared in the same turn as the last check. */
  async function passes(): Promise<void> {
    do {
      again = false
      try {
        await drain()
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error)
        lastError = { message, at: now() }
        log({ relay: 'error', sink: sink.kind, error: message })
      }
    } while (again && !stopped)
    running = undefined
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
    async drain() {
      run()
      await running
    },
    async stop() {
      stopped = true
      const ticking = timer?.stop()
      timer = undefined
      await ticking
      await running
    },
    async status() {
      const backlog = await source.backlog()
      return {
        sink: sink.kind,
        pending: backlog.count,
        oldestPendingSeconds:
          backlog.oldestReceivedAt === undefined ? null : Math.max(0, now() - backlog.oldestReceivedAt),
        published,
        lastError,
      }
    },
  }
}
