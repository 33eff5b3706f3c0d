/**
 * followFeed: tails the registry change feed from a stored cursor, delivering each event once to `onEvent`
 * and saving the cursor after it, so a restarted follower resumes where it stopped (at-least-once: an event
 * whose handler ran but whose cursor was not yet saved is delivered again).
 */
import type { RegistryClient } from './client.js'
import { CursorExpiredError, RegistryError } from './errors.js'
import type { FeedPage } from './overrides.js'
import type { FeedEventType, RegistryFeedEvent } from './types.js'

/** Where the follower keeps its position. `null`/`undefined` from `load` means "from the beginning". */
export interface CursorStore {
  load(): Promise<string | null | undefined> | string | null | undefined
  save(cursor: string | null): Promise<void> | void
}

export interface FollowFeedOptions {
  client: Pick<RegistryClient, 'getFeed' | 'streamFeed'>
  cursorStore: CursorStore
  /** Event types to follow, each optionally ending in `*`. A cursor is tied to its filter: keep it stable. */
  types?: readonly (FeedEventType | `${string}*`)[] | string
  onEvent(event: RegistryFeedEvent): Promise<void> | void
  /** Stops the follower; `followFeed` then resolves. */
  signal?: AbortSignal
  /** `poll` (default) pulls pages; `stream` holds the SSE stream open and catches up with pages first. */
  mode?: 'poll' | 'stream'
  /** Page size for pulls. */
  limit?: number
  /** Wait between pulls once caught up, milliseconds (default 15,000). */
  pollIntervalMs?: number
  /** For `stream` mode: the server's poll interval, seconds (5 to 60). */
  streamPollIntervalSeconds?: number
  /**
   * Called when the registry answers 410 `cursor_expired`. Re-bootstrap what you mirror, then return the cursor
   * to resume from (`null`: the start of the retention window). Without it, `followFeed` rejects with the
   * {@link CursorExpiredError}.
   */
  onCursorExpired?(error: CursorExpiredError): Promise<string | null> | string | null
  /** Told about each transient failure (network, 429, 5xx) before the follower retries it. */
  onRetry?(error: RegistryError, delayMs: number): void
  /** Backoff bounds for transient failures, milliseconds (default 500 to 30,000). */
  retry?: { initialDelayMs?: number; maxDelayMs?: number }
}

/** Whether an error is worth retrying: its `isRetryable` (no response, 408, 429, a 5xx, a stream `error`). */
export function isTransient(error: unknown): error is RegistryError {
  return RegistryError.is(error) && !CursorExpiredError.is(error) && error.isRetryable
}

/**
 * Follows the change feed until `signal` aborts (resolves) or a non-transient error occurs (rejects).
 * @example
 * const controller = new AbortController()
 * await followFeed({
 *   client: createRegistryClient({ baseUrl, apiKey }),
 *   cursorStore: { load: () => readFile('cursor', 'utf8').catch(() => null), save: (c) => writeFile('cursor', c ?? '') },
 *   types: ['authorization.*'],
 *   onEvent: (event) => console.log(event.event_type, event.entity_id),
 *   signal: controller.signal,
 * })
 */
export async function followFeed(options: FollowFeedOptions): Promise<void> {
  const { signal } = options
  const initialDelay = options.retry?.initialDelayMs ?? 500
  const maxDelay = options.retry?.maxDelayMs ?? 30_000
  let cursor: string | null = (await options.cursorStore.load()) || null
  let failures = 0

  const deliver = async (page: FeedPage): Promise<void> => {
    for (const event of page.events) {
      if (signal?.aborted) return
      await options.onEvent(event)
      cursor = event.event_id
      await options.cursorStore.save(cursor)
    }
    if (page.events.length === 0 && page.cursor && page.cursor !== cursor) {
      cursor = page.cursor
      await options.cursorStore.save(cursor)
    }
  }

  /** Pulls pages until caught up. */
  const catchUp = async (): Promise<void> => {
    for (;;) {
      const page = await options.client.getFeed({
        cursor,
        ...(options.types !== undefined ? { types: options.types } : {}),
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
        ...(signal ? { signal } : {}),
      })
      await deliver(page)
      failures = 0
      if (!page.has_more || page.events.length === 0 || signal?.aborted) return
    }
  }

  const stream = async (): Promise<void> => {
    for await (const message of options.client.streamFeed({
      cursor,
      ...(options.types !== undefined ? { types: options.types } : {}),
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
      ...(options.streamPollIntervalSeconds !== undefined
        ? { pollIntervalSeconds: options.streamPollIntervalSeconds }
        : {}),
      ...(signal ? { signal } : {}),
    })) {
      failures = 0
      if (message.event === 'feed') await deliver(message.data)
    }
  }

  while (!signal?.aborted) {
    try {
      await catchUp()
      if (signal?.aborted) break
      if (options.mode === 'stream') {
        await stream()
        // The server closed the stream: reconnect after a short pause.
        await sleep(initialDelay, signal)
      } else {
        await sleep(options.pollIntervalMs ?? 15_000, signal)
      }
    } catch (error) {
      if (signal?.aborted) break
      if (CursorExpiredError.is(error)) {
        if (!options.onCursorExpired) throw error
        cursor = (await options.onCursorExpired(error)) || null
        await options.cursorStore.save(cursor)
        continue
      }
      if (!isTransient(error)) throw error
      const delay = Math.min(maxDelay, initialDelay * 2 ** failures++)
      options.onRetry?.(error, delay)
      await sleep(delay, signal)
    }
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done(): void {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
  })
}
