import { nonceCapForRate } from './replay-cap.js'
import type { RememberOutcome, ReplayStore } from './types.js'

/** The live nonces of one keyid: a map for lookups and a min-heap by expiry so sweeping is O(log n) a nonce. */
class KeyNonces {
  readonly expiries = new Map<string, number>()
  private readonly heap: { nonce: string; expiresAt: number }[] = []

  sweep(now: number): void {
    const heap = this.heap
    while (heap.length > 0 && heap[0]!.expiresAt <= now) {
      const top = this.pop()
      if (this.expiries.get(top.nonce) === top.expiresAt) this.expiries.delete(top.nonce)
    }
  }

  add(nonce: string, expiresAt: number): void {
    this.expiries.set(nonce, expiresAt)
    const heap = this.heap
    heap.push({ nonce, expiresAt })
    let index = heap.length - 1
    while (index > 0) {
      const parent = (index - 1) >> 1
      if (heap[parent]!.expiresAt <= heap[index]!.expiresAt) break
      ;[heap[parent], heap[index]] = [heap[index]!, heap[parent]!]
      index = parent
    }
  }

  private pop(): { nonce: string; expiresAt: number } {
    const heap = this.heap
    const top = heap[0]!
    const last = heap.pop()!
    if (heap.length > 0) {
      heap[0] = last
      let index = 0
      for (;;) {
        const left = index * 2 + 1
        const right = left + 1
        let smallest = index
        if (left < heap.length && heap[left]!.expiresAt < heap[smallest]!.expiresAt) smallest = left
        if (right < heap.length && heap[right]!.expiresAt < heap[smallest]!.expiresAt) smallest = right
        if (smallest === index) break
        ;[heap[smallest], heap[index]] = [heap[index]!, heap[smallest]!]
        index = smallest
      }
    }
    return top
  }
}

/** Options of {@link MemoryReplayStore}. */
export interface MemoryReplayStoreOptions {
  /** Most live nonces across all keyids (the aggregate cap); reaching it answers `capacity`. Default 10,000,000. */
  readonly maxEntries?: number
  /**
   * The store's own per-keyid ceiling as a rate (messages a second): whatever cap a verifier passes, a keyid
   * holds at most `ceil(rate × 420)` live nonces here (see `nonceCapForRate`). Default none: the verifier's
   * cap, itself a rate by default (5,000 a second for webhooks, 2,100,000 nonces).
   */
  readonly maxNonceRatePerKey?: number
}

/**
 * An in-process {@link ReplayStore}: `(keyid, nonce)` pairs live until their `expiresAt` (Unix seconds), each
 * keyid holds at most the verifier's cap (by default a rate: 5,000 webhooks a second, 2,100,000 nonces) and
 * the store's own `maxNonceRatePerKey` ceiling when set, all keyids together at most `maxEntries`, and reaching a
 * cap rejects instead of evicting (AdCP security.mdx, webhook replay dedup sizing). `remember` is atomic because it never awaits. One process only: several pods
 * or endpoints must share a durable store (@adwire/store-sqlite, @adwire/store-postgres).
 *
 * @example
 * const replayStore = new MemoryReplayStore()
 * await verifyWebhook(message, { keys, replayStore })
 */
export class MemoryReplayStore implements ReplayStore {
  private readonly keyids = new Map<string, KeyNonces>()
  private readonly maxEntries: number
  private readonly maxPerKey: number
  private total = 0

  constructor(options: MemoryReplayStoreOptions = {}) {
    this.maxEntries = options.maxEntries ?? 10_000_000
    this.maxPerKey =
      options.maxNonceRatePerKey === undefined ? Infinity : nonceCapForRate(options.maxNonceRatePerKey)
  }

  /** Step 9a: whether the keyid's live nonces have reached `cap` (or the store's own per-keyid ceiling). */
  async atCapacity(keyid: string, cap: number, now: number): Promise<boolean> {
    return this.liveCount(keyid, now) >= Math.min(cap, this.maxPerKey)
  }

  /** Step 12: whether `(keyid, nonce)` is live. */
  async seen(keyid: string, nonce: string, now: number): Promise<boolean> {
    const expiresAt = this.keyids.get(keyid)?.expiries.get(nonce)
    return expiresAt !== undefined && expiresAt > now
  }

  /** Step 13: stores `(keyid, nonce)` until `expiresAt` unless it is live (`replayed`) or a cap is reached (`capacity`). */
  async remember(
    keyid: string,
    nonce: string,
    expiresAt: number,
    cap: number,
    now: number,
  ): Promise<RememberOutcome> {
    let nonces = this.nonces(keyid, now)
    if (nonces.expiries.has(nonce)) return 'replayed'
    if (nonces.expiries.size >= Math.min(cap, this.maxPerKey)) return 'capacity'
    if (this.total >= this.maxEntries) {
      if (this.sweepAll(now) >= this.maxEntries) return 'capacity'
      nonces = this.nonces(keyid, now)
    }
    nonces.add(nonce, expiresAt)
    this.total += 1
    return 'stored'
  }

  /**
   * Adds `count` placeholder nonces for a keyid living until `expiresAt`, e.g. to put a keyid at its cap in a
   * test (conformance vectors `per_keyid_cap_filled_for`). Ignores the caps.
   *
   * @example
   * store.fill('test-ed25519-webhook-2026', 100_000, now + 360)
   */
  fill(keyid: string, count: number, expiresAt: number): void {
    const nonces = this.nonces(keyid, -Infinity)
    for (let index = 0; index < count; index += 1) {
      const nonce = `\u0000fill-${index}`
      if (!nonces.expiries.has(nonce)) this.total += 1
      nonces.add(nonce, expiresAt)
    }
  }

  /** Live nonces held for a keyid (after dropping expired ones). */
  liveCount(keyid: string, now: number): number {
    if (!this.keyids.has(keyid)) return 0
    const size = this.nonces(keyid, now).expiries.size
    if (size === 0) this.keyids.delete(keyid)
    return size
  }

  /** Drops expired entries of every keyid (only near the aggregate cap); returns the live total. */
  private sweepAll(now: number): number {
    for (const keyid of [...this.keyids.keys()]) this.liveCount(keyid, now)
    return this.total
  }

  private nonces(keyid: string, now: number): KeyNonces {
    let nonces = this.keyids.get(keyid)
    if (!nonces) {
      nonces = new KeyNonces()
      this.keyids.set(keyid, nonces)
    }
    const before = nonces.expiries.size
    nonces.sweep(now)
    this.total -= before - nonces.expiries.size
    return nonces
  }
}
