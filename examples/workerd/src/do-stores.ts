/**
 * The receiver's stores on Durable Object storage (transactional, on disk in workerd): one object owns the
 * receiver, so each operation (a read and a write with no other await between) is atomic, as the store
 * interfaces require. Records are plain values under prefixed keys; `sweep` lists and deletes expired ones.
 */
import type { RememberOutcome, ReplayStore } from '@adwire/http-signatures'
import type {
  ClaimInput,
  ClaimRef,
  ClaimResult,
  ClaimStore,
  ConvergenceResult,
  ConvergenceStore,
  TaskObservation,
} from '@adwire/webhooks'

/** The part of `DurableObjectStorage` these stores use. */
export interface Storage {
  get<T>(key: string): Promise<T | undefined>
  put<T>(key: string, value: T): Promise<void>
  delete(key: string): Promise<boolean>
  list<T>(options: { prefix: string }): Promise<Map<string, T>>
}

interface ClaimRecord {
  fingerprint: string
  state: 'processing' | 'completed'
  fence: string
  leaseUntil: number
  expiresAt: number
  result: string | null
}

async function sweepPrefix(storage: Storage, prefix: string, now: number): Promise<number> {
  let removed = 0
  for (const [key, record] of await storage.list<{ expiresAt: number }>({ prefix })) {
    if (record.expiresAt <= now) {
      await storage.delete(key)
      removed += 1
    }
  }
  return removed
}

export class DurableClaimStore implements ClaimStore {
  constructor(private readonly storage: Storage) {}

  #key = (namespace: string, scope: string, key: string) =>
    `claim:${JSON.stringify([namespace, scope])}:${key}`

  async claim(input: ClaimInput): Promise<ClaimResult> {
    const id = this.#key(input.namespace, input.scope, input.key)
    let record = await this.storage.get<ClaimRecord>(id)
    if (record && record.expiresAt <= input.now) record = undefined
    if (record) {
      if (record.fingerprint !== input.fingerprint) return { kind: 'conflict' }
      if (record.state === 'completed') return { kind: 'completed', result: record.result }
      if (record.leaseUntil > input.now) return { kind: 'processing', leaseExpiresAt: record.leaseUntil }
      const taken = { ...record, fence: crypto.randomUUID(), leaseUntil: input.now + input.leaseSeconds }
      await this.storage.put(id, taken)
      return { kind: 'claimed', fence: taken.fence, takeover: true }
    }
    if (input.maxPerScope !== undefined) {
      const prefix = this.#key(input.namespace, input.scope, '')
      let live = 0
      for (const value of (await this.storage.list<ClaimRecord>({ prefix })).values())
        if (value.expiresAt > input.now) live += 1
      if (live >= input.maxPerScope) return { kind: 'capacity' }
    }
    const fence = crypto.randomUUID()
    await this.storage.put<ClaimRecord>(id, {
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
    const id = this.#key(ref.namespace, ref.scope, ref.key)
    const record = await this.storage.get<ClaimRecord>(id)
    if (!record || record.fence !== ref.fence) return false
    if (record.state === 'processing') await this.storage.put(id, { ...record, state: 'completed', result })
    return true
  }

  async release(ref: ClaimRef): Promise<void> {
    const id = this.#key(ref.namespace, ref.scope, ref.key)
    const record = await this.storage.get<ClaimRecord>(id)
    if (record && record.fence === ref.fence && record.state === 'processing')
      await this.storage.put(id, { ...record, leaseUntil: 0 })
  }

  sweep(now: number): Promise<number> {
    return sweepPrefix(this.storage, 'claim:', now)
  }
}

interface TerminalRecord {
  comparison: string
  state: 'publishing' | 'published'
  owner: string
  leaseUntil: number
  expiresAt: number
}

export class DurableConvergenceStore implements ConvergenceStore {
  constructor(private readonly storage: Storage) {}

  #key = (sender: string, taskId: string) => `terminal:${JSON.stringify([sender, taskId])}`

  async observe(observation: TaskObservation): Promise<ConvergenceResult> {
    const id = this.#key(observation.sender, observation.taskId)
    let record = await this.storage.get<TerminalRecord>(id)
    if (record && record.expiresAt <= observation.now) record = undefined
    if (!observation.terminal) return record ? 'stale' : 'proceed'
    if (!record) {
      await this.storage.put<TerminalRecord>(id, {
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
    await this.storage.put(id, {
      ...record,
      owner: observation.deliveryKey,
      leaseUntil: observation.now + observation.leaseSeconds,
    })
    return 'proceed'
  }

  async settle(sender: string, taskId: string, deliveryKey: string): Promise<void> {
    const id = this.#key(sender, taskId)
    const record = await this.storage.get<TerminalRecord>(id)
    if (record && record.owner === deliveryKey) await this.storage.put(id, { ...record, state: 'published' })
  }

  async release(sender: string, taskId: string, deliveryKey: string): Promise<void> {
    const id = this.#key(sender, taskId)
    const record = await this.storage.get<TerminalRecord>(id)
    if (record && record.owner === deliveryKey && record.state === 'publishing')
      await this.storage.put(id, { ...record, leaseUntil: 0 })
  }

  sweep(now: number): Promise<number> {
    return sweepPrefix(this.storage, 'terminal:', now)
  }
}

export class DurableReplayStore implements ReplayStore {
  constructor(private readonly storage: Storage) {}

  async #live(keyid: string, now: number): Promise<number> {
    let live = 0
    for (const value of (
      await this.storage.list<{ expiresAt: number }>({ prefix: `nonce:${keyid}:` })
    ).values())
      if (value.expiresAt > now) live += 1
    return live
  }

  async atCapacity(keyid: string, cap: number, now: number): Promise<boolean> {
    return (await this.#live(keyid, now)) >= cap
  }

  async seen(keyid: string, nonce: string, now: number): Promise<boolean> {
    const record = await this.storage.get<{ expiresAt: number }>(`nonce:${keyid}:${nonce}`)
    return record !== undefined && record.expiresAt > now
  }

  async remember(
    keyid: string,
    nonce: string,
    expiresAt: number,
    cap: number,
    now: number,
  ): Promise<RememberOutcome> {
    if (await this.seen(keyid, nonce, now)) return 'replayed'
    if ((await this.#live(keyid, now)) >= cap) return 'capacity'
    await this.storage.put(`nonce:${keyid}:${nonce}`, { expiresAt })
    return 'stored'
  }
}
