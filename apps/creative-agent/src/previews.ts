/**
 * The service's preview store: pages live in the agent's database (so a restart keeps them and every instance on
 * one PostgreSQL schema serves every page), with a bounded in-memory cache in front.
 *
 * The domain writes previews synchronously (`putMany` inside previewCreative), so each task takes its own
 * {@link TaskPreviews} from {@link ServicePreviewStore.forTask}: its pages go into the cache at once and into a
 * write-behind queue; the task awaits `flush()` before answering, which resolves once its pages are in the
 * database (or rejects, and the task must fail instead of returning URLs that would not work). Writes queued
 * while one is running are coalesced into the next statement, so a task of N pages costs one write, and
 * concurrent tasks share writes.
 *
 * `/previews/{id}` is answered by {@link ServicePreviewStore.lookup}: the cache, else the database. After its
 * `expires_at` the page is gone but its row stays (emptied by the sweep) for a day, so the id answers 410 Gone
 * rather than 404; the periodic sweep deletes it after that.
 */
import type { PreviewStore, StoredPreview } from './creative/preview-store.js'
import { PREVIEW_TOMBSTONE_SECONDS, type PreviewPersistence } from './storage.js'
import type { Log } from './tasks.js'

export type PreviewLookup =
  | { readonly state: 'live'; readonly preview: StoredPreview }
  | { readonly state: 'expired'; readonly expiredAt: Date }
  | { readonly state: 'unknown' }

/** One task's view of the store: the domain's PreviewStore plus the wait for its own writes. */
export interface TaskPreviews extends PreviewStore {
  /** Resolves when every page stored through this object is in the database; rejects when a write failed. */
  flush(): Promise<void>
}

/** What the task wrapper needs: a fresh {@link TaskPreviews} per task. */
export interface PreviewSource {
  forTask(): TaskPreviews
}

export interface ServicePreviewStore extends PreviewSource {
  /** The page at `now`: from the cache, else from the database (which may reject when it is unreachable). */
  lookup(id: string, now: Date): Promise<PreviewLookup>
  /** Resolves when the write queue is empty (before the database is closed). */
  idle(): Promise<void>
}

export interface ServicePreviewStoreOptions {
  /** Where pages are kept: the agent's Storage. */
  readonly persistence: PreviewPersistence
  /** How many pages the cache holds (the oldest go first). Default 10,000. */
  readonly maxEntries?: number
  /** How long after its expiry an unswept row still answers 410, seconds. Default a day. */
  readonly tombstoneSeconds?: number
  readonly log?: Log
}

/** The ids the domain makes (`pv_` and 32 hex digits): anything else is unknown without asking the database. */
const PREVIEW_ID = /^pv_[0-9a-f]{32}$/

interface Batch {
  readonly pages: Map<string, StoredPreview>
  readonly done: Promise<void>
  settle(error?: unknown): void
}

function newBatch(): Batch {
  let settle!: (error?: unknown) => void
  const done = new Promise<void>((resolve, reject) => {
    settle = (error) => (error === undefined ? resolve() : reject(error as Error))
  })
  // Marked handled: a batch nobody flushes must not become an unhandled rejection (failures are logged).
  done.catch(() => {})
  return { pages: new Map(), done, settle }
}

/**
 * @example
 * const previews = createServicePreviewStore({ persistence: storage })
 * const task = previews.forTask()
 * await previewCreative(request, { agentUrl, now: new Date(), previews: task })
 * await task.flush() // the pages are in the database: any instance serves them
 * await previews.lookup(id, new Date()) // { state: 'live', preview }
 */
export function createServicePreviewStore(options: ServicePreviewStoreOptions): ServicePreviewStore {
  const { persistence } = options
  const maxEntries = options.maxEntries ?? 10_000
  const tombstoneMs = (options.tombstoneSeconds ?? PREVIEW_TOMBSTONE_SECONDS) * 1000
  const log = options.log ?? (() => {})
  const cache = new Map<string, StoredPreview>()

  const remember = (id: string, preview: StoredPreview): StoredPreview => {
    const existing = cache.get(id)
    cache.delete(id)
    // Content-addressed ids: the same page stored again keeps the later expiry.
    const keep = existing && existing.expiresAt > preview.expiresAt ? existing : preview
    cache.set(id, keep)
    while (cache.size > maxEntries) cache.delete(cache.keys().next().value as string)
    return keep
  }

  let next: Batch | undefined
  let draining = false
  let drained: Promise<void> = Promise.resolve()

  async function drain(): Promise<void> {
    try {
      await Promise.resolve() // let the current tick add its pages to the batch
      while (next) await write(next)
    } finally {
      draining = false // in the same turn that saw the queue empty: nothing can be left behind
    }
  }

  /** Writes one batch in one statement; settles the tasks waiting for it. */
  async function write(batch: Batch): Promise<void> {
    next = undefined
    const pages = [...batch.pages].map(([id, page]) => ({ id, html: page.html, expiresAt: page.expiresAt }))
    try {
      await persistence.putPreviews(pages)
      batch.settle()
    } catch (error) {
      log({ previews: 'not stored', pages: pages.length, error: String(error) })
      // No task answers with these URLs: do not serve from the cache what the database does not hold.
      for (const [id, page] of batch.pages) if (cache.get(id) === page) cache.delete(id)
      batch.settle(error ?? new Error('the preview write failed'))
    }
  }

  function enqueue(list: readonly (readonly [string, StoredPreview])[]): Promise<void> {
    next ??= newBatch()
    for (const [id, preview] of list) {
      const kept = remember(id, preview)
      const queued = next.pages.get(id)
      if (!queued || queued.expiresAt < kept.expiresAt) next.pages.set(id, kept)
    }
    const { done } = next
    if (!draining) {
      draining = true
      drained = drain()
    }
    return done
  }

  const cached = (id: string, now: Date): StoredPreview | undefined => {
    const preview = cache.get(id)
    return preview && preview.expiresAt.getTime() > now.getTime() ? preview : undefined
  }

  return {
    forTask() {
      const writes: Promise<void>[] = []
      return {
        putMany(list) {
          if (list.length > 0) writes.push(enqueue(list))
        },
        get: cached,
        async flush() {
          await Promise.all(writes.splice(0))
        },
      }
    },
    async lookup(id, now) {
      const hit = cached(id, now)
      if (hit) return { state: 'live', preview: hit }
      // Not in the cache, or expired there: another instance may hold it (or a later expiry of it).
      if (!PREVIEW_ID.test(id)) return { state: 'unknown' }
      const row = await persistence.getPreview(id)
      if (!row || now.getTime() - row.expiresAt.getTime() > tombstoneMs) {
        cache.delete(id)
        return { state: 'unknown' }
      }
      if (row.expiresAt.getTime() > now.getTime() && row.html !== '') {
        const preview = remember(id, { html: row.html, expiresAt: row.expiresAt })
        return { state: 'live', preview }
      }
      cache.delete(id) // the page itself is dropped at expiry; the row is the tombstone
      return { state: 'expired', expiredAt: row.expiresAt }
    },
    async idle() {
      while (draining) await drained
    },
  }
}
