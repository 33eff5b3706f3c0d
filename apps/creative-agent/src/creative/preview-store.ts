/** Where URL previews live until they expire: a bounded in-memory map, or anything with the same interface. */

export interface StoredPreview {
  html: string
  expiresAt: Date
}

export interface PreviewStore {
  /** Stores previews (one call per task, however many previews it made). */
  putMany(entries: readonly (readonly [string, StoredPreview])[]): void
  /** The preview, or undefined when unknown or expired at `now`. */
  get(id: string, now: Date): StoredPreview | undefined
}

/** An in-memory store holding at most `maxEntries` previews (the oldest go first). */
export function createMemoryPreviewStore(options: { maxEntries?: number } = {}): PreviewStore {
  const maxEntries = options.maxEntries ?? 10_000
  const entries = new Map<string, StoredPreview>()
  return {
    putMany(list) {
      for (const [id, preview] of list) {
        const existing = entries.get(id)
        entries.delete(id)
        // Content-addressed ids: storing the same page again keeps the later expiry.
        entries.set(id, existing && existing.expiresAt > preview.expiresAt ? existing : preview)
      }
      while (entries.size > maxEntries) entries.delete(entries.keys().next().value as string)
    },
    get(id, now) {
      const preview = entries.get(id)
      if (!preview) return undefined
      if (preview.expiresAt.getTime() <= now.getTime()) {
        entries.delete(id)
        return undefined
      }
      return preview
    },
  }
}

export const defaultPreviewStore: PreviewStore = createMemoryPreviewStore()

/**
 * The page a server serves at `/previews/{id}`: `{status: 200, html}` while the preview lives, else 404 when unknown or
 * once it has expired.
 */
export function renderPreview(
  id: string,
  now: Date,
  store: PreviewStore = defaultPreviewStore,
): { status: 200; contentType: string; html: string; expiresAt: Date } | { status: 404 } {
  const preview = store.get(id, now)
  if (!preview) return { status: 404 }
  return {
    status: 200,
    contentType: 'text/html; charset=utf-8',
    html: preview.html,
    expiresAt: preview.expiresAt,
  }
}
