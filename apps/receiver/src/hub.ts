/**
 * Live events and verification failures for the stream, from every instance on the database: one poll of
 * the database per instance (every `pollMs` while someone listens, and at once after a local publication),
 * fanned out to the subscribers. PostgreSQL assigns sequence numbers before commit, so a row may appear
 * after a higher one: each poll looks `lookback` numbers behind the highest seen and skips rows already sent.
 */
import type { EventRecord, FailureRecord, ReceiverDatabase, StreamCursor } from './db/types.js'

export type StreamMessage =
  | { readonly kind: 'delivery'; readonly record: EventRecord }
  | { readonly kind: 'failure'; readonly record: FailureRecord }

export interface Subscription {
  /** Resolves when the subscription ends (closed by the subscriber or by {@link EventHub.close}). */
  readonly ended: Promise<void>
  close(): void
}

export interface SubscribeOptions {
  /** Only this registration's messages. */
  readonly registrationId?: string
  /** Replay what came after this cursor first; default: only what arrives from now on. */
  readonly since?: StreamCursor
}

export interface EventHub {
  /** `send` gets each message once, with the cursor to resume after it. */
  subscribe(
    options: SubscribeOptions,
    send: (message: StreamMessage, cursor: StreamCursor) => void,
  ): Promise<Subscription>
  /** Polls now (something was just written). */
  kick(): void
  /** Ends every subscription and stops polling. */
  close(): void
}

interface Subscriber {
  readonly registrationId?: string
  readonly send: (message: StreamMessage, cursor: StreamCursor) => void
  cursor: { events: number; failures: number }
  /** Messages that arrived while the subscriber was catching up; null once live. */
  pending: StreamMessage[] | null
  /** Rows the catch-up sent that the poll has not dispatched yet: skipped once when it does. */
  readonly skip: Set<string>
  end: () => void
}

const PAGE = 500

/**
 * @example
 * const hub = createEventHub(db, { log: console.error })
 * const subscription = await hub.subscribe({}, (message) => console.log(message.kind, message.record.seq))
 */
export function createEventHub(
  db: ReceiverDatabase,
  options: { pollMs?: number; lookback?: number; log?: (error: unknown) => void } = {},
): EventHub {
  const pollMs = options.pollMs ?? 500
  const lookback = options.lookback ?? 100
  const log = options.log ?? (() => {})
  const subscribers = new Set<Subscriber>()
  const seen = { events: new Set<number>(), failures: new Set<number>() }
  let cursor: { events: number; failures: number } | undefined
  let starting: Promise<void> | undefined
  let timer: ReturnType<typeof setInterval> | undefined
  let polling: Promise<void> | undefined
  let again = false
  let closed = false
  /** Bumped when the last subscriber leaves: the position is forgotten, the next subscriber starts afresh. */
  let generation = 0

  const matches = (subscriber: Subscriber, message: StreamMessage) =>
    subscriber.registrationId === undefined || subscriber.registrationId === message.record.registrationId

  function deliver(subscriber: Subscriber, message: StreamMessage) {
    if (!matches(subscriber, message)) return
    if (subscriber.skip.size > 0 && subscriber.skip.delete(`${message.kind}:${message.record.seq}`)) return
    const key = message.kind === 'delivery' ? 'events' : 'failures'
    subscriber.cursor[key] = Math.max(subscriber.cursor[key], message.record.seq)
    subscriber.send(message, { ...subscriber.cursor })
  }

  function dispatch(message: StreamMessage) {
    for (const subscriber of subscribers) {
      if (subscriber.pending) subscriber.pending.push(message)
      else deliver(subscriber, message)
    }
  }

  async function pollOnce(): Promise<void> {
    const current = cursor
    const mine = generation
    if (!current) return
    for (const [key, read, kind] of [
      ['events', (after: number) => db.eventsAfter(after, PAGE), 'delivery'],
      ['failures', (after: number) => db.failuresAfter(after, PAGE), 'failure'],
    ] as const) {
      for (;;) {
        const floor = Math.max(0, current[key] - lookback)
        const rows: (EventRecord | FailureRecord)[] = await read(floor)
        // Everyone left (and the position was forgotten) while this poll ran: drop what it read.
        if (generation !== mine) return
        let fresh = 0
        for (const record of rows) {
          if (seen[key].has(record.seq)) continue
          seen[key].add(record.seq)
          current[key] = Math.max(current[key], record.seq)
          fresh += 1
          dispatch({ kind, record } as StreamMessage)
        }
        for (const seq of seen[key]) if (seq <= current[key] - lookback) seen[key].delete(seq)
        if (rows.length < PAGE || fresh === 0) break
      }
    }
  }

  function poll(): void {
    if (polling) {
      again = true
      return
    }
    polling = (async () => {
      do {
        again = false
        try {
          await pollOnce()
        } catch (error) {
          log(error)
        }
      } while (again && !closed)
    })().finally(() => {
      polling = undefined
    })
  }

  async function start(): Promise<void> {
    const mine = generation
    starting ??= (async () => {
      const now = await db.cursor()
      // Rows already visible in the look-back window are history, not news (rows numbered above the
      // cursor appeared since it was read: they are news).
      const floor = (seq: number) => Math.max(0, seq - lookback)
      const events = await db.eventsAfter(floor(now.events), lookback)
      const failures = await db.failuresAfter(floor(now.failures), lookback)
      if (generation !== mine) return
      for (const row of events) if (row.seq <= now.events) seen.events.add(row.seq)
      for (const row of failures) if (row.seq <= now.failures) seen.failures.add(row.seq)
      cursor = { ...now }
    })()
    await starting
    if (!cursor) return start()
    if (!timer && !closed) {
      timer = setInterval(poll, pollMs)
      timer.unref?.()
    }
  }

  /** Sends what a subscriber missed since its cursor, from the database, page by page. */
  async function catchUp(subscriber: Subscriber): Promise<Set<string>> {
    const sent = new Set<string>()
    for (const [key, read, kind] of [
      ['events', (after: number) => db.eventsAfter(after, PAGE, subscriber.registrationId), 'delivery'],
      ['failures', (after: number) => db.failuresAfter(after, PAGE, subscriber.registrationId), 'failure'],
    ] as const) {
      for (;;) {
        const rows: (EventRecord | FailureRecord)[] = await read(subscriber.cursor[key])
        for (const record of rows) {
          sent.add(`${kind}:${record.seq}`)
          deliver(subscriber, { kind, record } as StreamMessage)
        }
        if (rows.length < PAGE) break
      }
    }
    return sent
  }

  return {
    async subscribe(subscribeOptions, send) {
      if (closed) throw new Error('the event hub is closed')
      await start()
      let resolveEnded!: () => void
      const ended = new Promise<void>((resolve) => (resolveEnded = resolve))
      const subscriber: Subscriber = {
        ...(subscribeOptions.registrationId ? { registrationId: subscribeOptions.registrationId } : {}),
        send,
        cursor: { ...(subscribeOptions.since ?? cursor!) },
        pending: subscribeOptions.since ? [] : null,
        skip: new Set(),
        end: resolveEnded,
      }
      subscribers.add(subscriber)
      const close = () => {
        if (!subscribers.delete(subscriber)) return
        if (subscribers.size === 0) {
          if (timer) clearInterval(timer)
          timer = undefined
          generation += 1
          cursor = undefined
          starting = undefined
          seen.events.clear()
          seen.failures.clear()
        }
        resolveEnded()
      }
      if (!subscribeOptions.since) return { ended, close }
      try {
        const sent = await catchUp(subscriber)
        const pending = subscriber.pending ?? []
        subscriber.pending = null
        for (const message of pending) {
          if (!sent.has(`${message.kind}:${message.record.seq}`)) deliver(subscriber, message)
        }
        // What the catch-up sent and the poll has yet to see would be dispatched again later.
        for (const entry of sent) {
          const [kind, text] = entry.split(':') as ['delivery' | 'failure', string]
          const key = kind === 'delivery' ? 'events' : 'failures'
          const seq = Number(text)
          if (seq > cursor![key] || (seq > cursor![key] - lookback && !seen[key].has(seq))) {
            subscriber.skip.add(entry)
          }
        }
      } catch (error) {
        close()
        throw error
      }
      return { ended, close }
    },
    kick() {
      if (subscribers.size > 0) poll()
    },
    close() {
      closed = true
      if (timer) clearInterval(timer)
      timer = undefined
      for (const subscriber of [...subscribers]) {
        subscribers.delete(subscriber)
        subscriber.end()
      }
    },
  }
}
