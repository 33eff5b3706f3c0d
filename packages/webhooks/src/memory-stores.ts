/**
 * In-memory stores for examples and unit tests. They keep nothing across a restart and nothing is shared
 * between processes, so a real receiver must not use them: the AdCP receiver rules require a durable dedup
 * store shared by every instance (use @adwire/store-sqlite or @adwire/store-postgres).
 */
import type {
  ActivityEntry,
  AttemptOutcome,
  ClaimInput,
  ClaimRef,
  ClaimResult,
  ClaimStore,
  ConvergenceResult,
  ConvergenceStore,
  EnqueueResult,
  LeasedOutboxEntry,
  NewOutboxEntry,
  OutboxEntry,
  OutboxStore,
  TaskObservation,
} from './stores.js'

interface ClaimRecord {
  fingerprint: string
  state: 'processing' | 'completed'
  fence: string
  leaseUntil: number
  expiresAt: number
  result: string | null
}

const claimId = (namespace: string, scope: string, key: string) => JSON.stringify([namespace, scope, key])

/** {@link ClaimStore} in a Map. */
export class MemoryClaimStore implements ClaimStore {
  readonly #records = new Map<string, ClaimRecord>()

  async claim(input: ClaimInput): Promise<ClaimResult> {
    const id = claimId(input.namespace, input.scope, input.key)
    let record = this.#records.get(id)
    if (record && record.expiresAt <= input.now) {
      this.#records.delete(id)
      record = undefined
    }
    if (record) {
      if (record.fingerprint !== input.fingerprint) return { kind: 'conflict' }
      if (record.state === 'completed') return { kind: 'completed', result: record.result }
      if (record.leaseUntil > input.now) return { kind: 'processing', leaseExpiresAt: record.leaseUntil }
      record.fence = crypto.randomUUID()
      record.leaseUntil = input.now + input.leaseSeconds
      return { kind: 'claimed', fence: record.fence, takeover: true }
    }
    if (input.maxPerScope !== undefined) {
      const prefix = claimId(input.namespace, input.scope, '').slice(0, -2)
      let live = 0
      for (const [key, value] of this.#records)
        if (key.startsWith(prefix) && value.expiresAt > input.now) live += 1
      if (live >= input.maxPerScope) return { kind: 'capacity' }
    }
    const fence = crypto.randomUUID()
    this.#records.set(id, {
      fingerprint: input.fingerprint,
      state: 'processing',
      fence,
      leaseUntil: input.now + input.leaseSeconds,
      expiresAt: input.now + input.retentionSeconds,
      result: null,
    })
    return { kind: 'claimed', fence, takeover: false }
  }

  async complete(ref: ClaimRef, _now: number, result: string | null = null): Promise<boolean> {
    const record = this.#records.get(claimId(ref.namespace, ref.scope, ref.key))
    if (!record || record.fence !== ref.fence) return false
    if (record.state === 'processing') {
      record.state = 'completed'
      record.result = result
    }
    return true
  }

  async release(ref: ClaimRef): Promise<void> {
    const record = this.#records.get(claimId(ref.namespace, ref.scope, ref.key))
    if (record && record.fence === ref.fence && record.state === 'processing') record.leaseUntil = 0
  }

  async sweep(now: number): Promise<number> {
    let removed = 0
    for (const [id, record] of this.#records) {
      if (record.expiresAt <= now) {
        this.#records.delete(id)
        removed += 1
      }
    }
    return removed
  }
}

interface TerminalRecord {
  comparison: string
  state: 'publishing' | 'published'
  owner: string
  leaseUntil: number
  expiresAt: number
}

/** {@link ConvergenceStore} in a Map. */
export class MemoryConvergenceStore implements ConvergenceStore {
  readonly #terminals = new Map<string, TerminalRecord>()

  async observe(observation: TaskObservation): Promise<ConvergenceResult> {
    const id = JSON.stringify([observation.sender, observation.taskId])
    let record = this.#terminals.get(id)
    if (record && record.expiresAt <= observation.now) {
      this.#terminals.delete(id)
      record = undefined
    }
    if (!observation.terminal) return record ? 'stale' : 'proceed'
    if (!record) {
      this.#terminals.set(id, {
        comparison: observation.comparison,
        state: 'publishing',
        owner: observation.deliveryKey,
        leaseUntil: observation.now + observation.leaseSeconds,
        expiresAt: observation.now + observation.retentionSeconds,
      })
      return 'proceed'
    }
    if (record.comparison !== observation.comparison) return 'conflict'
    if (record.state === 'published') return 'duplicate'
    if (record.owner !== observation.deliveryKey && record.leaseUntil > observation.now) return 'in_progress'
    record.owner = observation.deliveryKey
    record.leaseUntil = observation.now + observation.leaseSeconds
    return 'proceed'
  }

  async settle(sender: string, taskId: string, deliveryKey: string): Promise<void> {
    const record = this.#terminals.get(JSON.stringify([sender, taskId]))
    if (record && record.owner === deliveryKey) record.state = 'published'
  }

  async release(sender: string, taskId: string, deliveryKey: string): Promise<void> {
    const record = this.#terminals.get(JSON.stringify([sender, taskId]))
    if (record && record.owner === deliveryKey && record.state === 'publishing') record.leaseUntil = 0
  }

  async sweep(now: number): Promise<number> {
    let removed = 0
    for (const [id, record] of this.#terminals) {
      if (record.expiresAt <= now) {
        this.#terminals.delete(id)
        removed += 1
      }
    }
    return removed
  }
}

interface OutboxRecord extends OutboxEntry {
  state: 'pending' | 'delivered' | 'failed' | 'superseded'
  fence: string | null
  leaseUntil: number
}

/** Media buy ids without duplicates, in the order given. */
const distinct = (ids: readonly string[] | undefined): string[] => [...new Set(ids ?? [])]

/** {@link OutboxStore} in arrays. */
export class MemoryOutboxStore implements OutboxStore {
  readonly #entries: OutboxRecord[] = []
  readonly #activity: Array<ActivityEntry & { destination: string }> = []
  /** Closed media buys, with when they closed. */
  readonly #closed = new Map<string, number>()

  async enqueue(input: NewOutboxEntry): Promise<EnqueueResult> {
    const mediaBuyIds = distinct(input.mediaBuyIds)
    const closed = mediaBuyIds.filter((id) => this.#closed.has(id))
    if (closed.length > 0) return { superseded: [], closed }
    if (this.#entries.some((existing) => existing.id === input.id))
      throw new Error(`outbox entry ${input.id} exists`)
    const entry: Omit<OutboxEntry, 'attempts'> = { ...input, mediaBuyIds, barrier: input.barrier === true }
    const superseded: string[] = []
    if (entry.coalesceKey !== null) {
      for (const existing of this.#entries) {
        if (
          existing.state === 'pending' &&
          existing.attempts === 0 &&
          existing.destination === entry.destination &&
          existing.coalesceKey === entry.coalesceKey &&
          existing.fence === null
        ) {
          existing.state = 'superseded'
          superseded.push(existing.id)
        }
      }
    }
    this.#entries.push({
      ...entry,
      headers: { ...entry.headers },
      attempts: 0,
      state: 'pending',
      fence: null,
      leaseUntil: 0,
    })
    if (entry.barrier) for (const id of mediaBuyIds) this.#closed.set(id, entry.createdAt)
    return { superseded }
  }

  /** Whether an earlier entry to this barrier's URL sharing one of its media buys is still pending. */
  #blocked(barrier: OutboxRecord): boolean {
    for (const earlier of this.#entries) {
      if (earlier === barrier) return false
      if (
        earlier.state === 'pending' &&
        earlier.url === barrier.url &&
        earlier.mediaBuyIds.some((id) => barrier.mediaBuyIds.includes(id))
      )
        return true
    }
    return false
  }

  async lease(now: number, limit: number, leaseSeconds: number): Promise<LeasedOutboxEntry[]> {
    const due = this.#entries
      .filter(
        (entry) =>
          entry.state === 'pending' &&
          entry.nextAttemptAt <= now &&
          entry.leaseUntil <= now &&
          !(entry.barrier && this.#blocked(entry)),
      )
      .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.createdAt - b.createdAt)
      .slice(0, limit)
    return due.map((entry) => {
      entry.fence = crypto.randomUUID()
      entry.leaseUntil = now + leaseSeconds
      return { ...snapshot(entry), fence: entry.fence }
    })
  }

  async record(id: string, fence: string, outcome: AttemptOutcome, now: number): Promise<boolean> {
    const entry = this.#entries.find((candidate) => candidate.id === id)
    if (!entry || entry.fence !== fence || entry.state !== 'pending') return false
    const attempt = entry.attempts + 1
    Object.assign(entry, { attempts: attempt, fence: null, leaseUntil: 0 })
    if (outcome.kind === 'delivered') entry.state = 'delivered'
    else if (outcome.kind === 'failed') entry.state = 'failed'
    else Object.assign(entry, { nextAttemptAt: outcome.nextAttemptAt })
    this.#activity.push({
      destination: entry.destination,
      idempotency_key: entry.idempotencyKey,
      status: outcome.kind === 'delivered' ? 'success' : outcome.activityStatus,
      http_status_code: outcome.httpStatus ?? null,
      attempt,
      error_message: outcome.kind === 'delivered' ? null : (outcome.error ?? null),
      at: now,
    })
    return true
  }

  async activity(destination: string, limit = 100): Promise<ActivityEntry[]> {
    return this.#activity
      .filter((row) => row.destination === destination)
      .reverse()
      .slice(0, limit)
      .map(({ destination: _destination, ...row }) => row)
  }

  async pending(destination?: string): Promise<OutboxEntry[]> {
    return this.#entries
      .filter(
        (entry) =>
          entry.state === 'pending' && (destination === undefined || entry.destination === destination),
      )
      .map(snapshot)
  }

  async closedMediaBuys(mediaBuyIds: readonly string[]): Promise<string[]> {
    return distinct(mediaBuyIds).filter((id) => this.#closed.has(id))
  }

  async closeMediaBuys(mediaBuyIds: readonly string[], now: number): Promise<string[]> {
    const closed = distinct(mediaBuyIds).filter((id) => !this.#closed.has(id))
    for (const id of closed) this.#closed.set(id, now)
    return closed
  }
}

function snapshot(entry: OutboxRecord): OutboxEntry {
  const { state: _state, fence: _fence, leaseUntil: _lease, ...rest } = entry
  return { ...rest, headers: { ...rest.headers }, mediaBuyIds: [...rest.mediaBuyIds] }
}
