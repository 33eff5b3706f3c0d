/** What a load produced, with an optional per-document lifetime (from `Cache-Control`, for instance). */
export interface Loaded<T> {
  readonly value: T
  readonly ttlSeconds?: number
}

/** Options of a {@link DocumentCache}. All durations in seconds. */
export interface DocumentCacheOptions<T> {
  /** Fetches and parses the document; `forced` is true for a miss-driven refetch (send `no-cache`). */
  readonly load: (forced: boolean, now: number) => Promise<Loaded<T>>
  /** Lifetime of a loaded document when the load gives none. */
  readonly ttlSeconds: number
  /** After a failed load, no new load is started for this long (the failure is answered from memory). */
  readonly negativeCacheSeconds: number
  /** How long past its lifetime an expired document still answers while loads fail. */
  readonly staleIfErrorSeconds: number
  /** Minimum time between miss-driven refetches; the first is never delayed. */
  readonly refetchCooldownSeconds: number
  /** Which load failures an expired document may paper over (default: all). */
  readonly serveStaleOn?: (error: unknown) => boolean
}

/** The answer of {@link DocumentCache.get}. */
export interface CacheRead<T> {
  readonly value: T
  /** Whether the value was loaded by this call (or by a load it joined): a refetch would add nothing. */
  readonly loaded: boolean
  /** Set when an expired value is served because its reload failed: the load's error. */
  readonly degraded?: unknown
}

/**
 * One remote document (a JWKS, a brand.json discovery, an adagents.json pin set) with the caching rules AdCP
 * asks of key discovery (security.mdx "Webhook callbacks" steps 3 and 4): a bounded lifetime; concurrent
 * callers share one in-flight load; failures are negatively cached so a dead host is not hammered; a
 * miss-driven refetch happens at once the first time, then at most once per cooldown. Times come from the
 * caller (`now`, Unix seconds), so tests and conformance vectors run on a fixed clock. Internal to `keys/`.
 *
 * @example
 * const cache = new DocumentCache({ load, ttlSeconds: 300, negativeCacheSeconds: 30, staleIfErrorSeconds: 300, refetchCooldownSeconds: 30 })
 * const { value } = await cache.get(now)
 */
export class DocumentCache<T> {
  readonly #options: DocumentCacheOptions<T>
  #entry: { readonly value: T; readonly fetchedAt: number; readonly ttl: number } | undefined
  #inflight: Promise<T> | undefined
  #failure: { readonly error: unknown; readonly at: number } | undefined
  #lastRefetchAt: number | undefined
  #lastRefetchFailed: { readonly error: unknown } | undefined

  constructor(options: DocumentCacheOptions<T>) {
    this.#options = options
  }

  /** The current document: cached while fresh, else loaded (or joined), else stale-if-error, else throws. */
  async get(now: number): Promise<CacheRead<T>> {
    const entry = this.#entry
    if (entry && now >= entry.fetchedAt && now < entry.fetchedAt + entry.ttl)
      return { value: entry.value, loaded: false }
    const failure = this.#failure
    if (
      !this.#inflight &&
      failure &&
      now >= failure.at &&
      now < failure.at + this.#options.negativeCacheSeconds
    ) {
      return this.#stale(now, failure.error)
    }
    try {
      return { value: await this.#load(now, false), loaded: true }
    } catch (error) {
      return this.#stale(now, error)
    }
  }

  /**
   * A miss-driven refetch: joins a load in flight, else loads unless the previous refetch was less than the
   * cooldown ago, in which case it answers `undefined` (nothing new) or rethrows that refetch's failure.
   */
  async refetch(now: number): Promise<T | undefined> {
    if (this.#inflight) return this.#inflight
    const last = this.#lastRefetchAt
    if (last !== undefined && now - last < this.#options.refetchCooldownSeconds) {
      if (this.#lastRefetchFailed) throw this.#lastRefetchFailed.error
      return undefined
    }
    this.#lastRefetchAt = now
    try {
      const value = await this.#load(now, true)
      this.#lastRefetchFailed = undefined
      return value
    } catch (error) {
      this.#lastRefetchFailed = { error }
      throw error
    }
  }

  #stale(now: number, error: unknown): CacheRead<T> {
    const entry = this.#entry
    const allowed = this.#options.serveStaleOn?.(error) ?? true
    if (allowed && entry && now < entry.fetchedAt + entry.ttl + this.#options.staleIfErrorSeconds) {
      return { value: entry.value, loaded: false, degraded: error }
    }
    throw error
  }

  #load(now: number, forced: boolean): Promise<T> {
    if (this.#inflight) return this.#inflight
    const promise = (async () => {
      try {
        const loaded = await this.#options.load(forced, now)
        this.#entry = {
          value: loaded.value,
          fetchedAt: now,
          ttl: loaded.ttlSeconds ?? this.#options.ttlSeconds,
        }
        this.#failure = undefined
        return loaded.value
      } catch (error) {
        this.#failure = { error, at: now }
        throw error
      } finally {
        this.#inflight = undefined
      }
    })()
    this.#inflight = promise
    return promise
  }
}

/**
 * Looks a key up in a cached document and, on a miss, refetches once (cooldown permitting) before answering
 * `undefined`. A miss on a stale-if-error document rethrows the load failure instead: the key may exist.
 *
 * @example
 * const jwk = await findWithRefetch(cache, now, (keys) => keys.get(kid))
 */
export async function findWithRefetch<T, R>(
  cache: DocumentCache<T>,
  now: number,
  find: (value: T) => R | undefined,
): Promise<R | undefined> {
  const read = await cache.get(now)
  const found = find(read.value)
  if (found !== undefined || read.loaded) return found
  if (read.degraded !== undefined) throw read.degraded
  const refreshed = await cache.refetch(now)
  return refreshed === undefined ? undefined : find(refreshed)
}
