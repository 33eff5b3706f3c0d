/**
 * The count at the reference receiver, after the push crash test's workload: which of the events the ledger
 * owes were published (exactly once, under one idempotency_key on the wire), which were lost, and which
 * pushes announce a change that did not happen.
 */
import type { BuyerSide, PushKind, SeenPush } from './push-crash-receiver.js'
import { finalSequence } from './push-crash-receiver.js'
import type { Ledger } from './push-crash-workload.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The events owed: the ledger's, plus each closed buy's delivery reports. A buy's final report carries the
 * sequence number after the last report the buy sent, so reports 1 … final−1 are owed; without a final report
 * (lost), those up to the highest sequence number seen.
 */
export function owedEvents(buyer: BuyerSide, ledger: Ledger): Map<string, string> {
  const owed = new Map(ledger.expected)
  const seen = [...buyer.wire(), ...buyer.published()]
  const finals = new Map<string, number>()
  const highest = new Map<string, number>()
  for (const push of seen) {
    const [, buy, sequence] = push.event.id.split(':')
    if (push.event.kind === 'final') {
      const at = finalSequence(push.body)
      if (at !== undefined) finals.set(buy!, Math.max(finals.get(buy!) ?? 0, at))
    }
    if (push.event.kind === 'report') highest.set(buy!, Math.max(highest.get(buy!) ?? 0, Number(sequence)))
  }
  for (const id of ledger.expected.keys()) {
    if (!id.startsWith('final:')) continue
    const buy = id.slice('final:'.length)
    const last = finals.has(buy) ? finals.get(buy)! - 1 : (highest.get(buy) ?? 0)
    for (let sequence = 1; sequence <= last; sequence++)
      owed.set(`report:${buy}:${sequence}`, `buy ${buy} report ${sequence} (before its final report)`)
  }
  return owed
}

/**
 * Waits until the agent has sent nothing for `quietMs` with every owed event published, or for `giveUpMs`
 * with some missing (a lost push never comes; a retry after a failed attempt comes within seconds), or `ms`
 * passed. Resolves with whether everything owed arrived.
 */
export async function drain(
  buyer: BuyerSide,
  ledger: Ledger,
  { ms = 30_000, quietMs = 1000, giveUpMs = 5000 } = {},
): Promise<boolean> {
  const end = Date.now() + ms
  let count = buyer.deliveries()
  let since = Date.now()
  for (;;) {
    await sleep(100)
    if (buyer.deliveries() !== count) {
      count = buyer.deliveries()
      since = Date.now()
    }
    const owed = owedEvents(buyer, ledger)
    const complete = [...owed.keys()].every((id) => buyer.hasPublished(id))
    const quiet = Date.now() - since
    if (quiet >= (complete ? quietMs : giveUpMs) || Date.now() > end) return complete
  }
}

/** Per kind of push: how many events were owed, and what went wrong. */
export interface KindCount {
  expected: number
  received: number
  lost: number
  duplicated: number
  unexpected: number
}

export interface Verdict {
  /** Events owed. */
  readonly expected: number
  /** Owed events the receiver published (or answered as stale, see {@link Verdict.stale}). */
  readonly received: number
  /** Owed events the receiver never published. */
  readonly lost: string[]
  /** Owed events published, or sent, under more than one idempotency_key. */
  readonly duplicated: string[]
  /** Pushes of events nothing owes (a change that was not stored, or another kind). */
  readonly unexpected: string[]
  /** Deliveries that reached the receiver (retries included). */
  readonly deliveries: number
  /**
   * Owed task statuses delivered after the task's terminal status, which the receiver answers as stale and
   * does not publish (it converges on the terminal one): delivered, not lost.
   */
  readonly stale: string[]
  /** Deliveries the receiver refused, by outcome. */
  readonly refused: Record<string, number>
  /** Disagreements between what the receiver published and its events API (key, publications). */
  readonly listedMismatch: string[]
  readonly byKind: Record<PushKind, KindCount>
}

const keysById = (pushes: readonly SeenPush[]) => {
  const keys = new Map<string, Set<string>>()
  for (const push of pushes) {
    const set = keys.get(push.event.id) ?? new Set<string>()
    keys.set(push.event.id, set.add(push.key))
  }
  return keys
}

const kindOf = (id: string) => id.slice(0, id.indexOf(':')) as PushKind

/** Compares what the receiver published (and what crossed the wire) with what the ledger owes. */
export async function verdict(buyer: BuyerSide, ledger: Ledger): Promise<Verdict> {
  const owed = owedEvents(buyer, ledger)
  const published = buyer.published()
  const wire = keysById(buyer.wire())
  const publishedKeys = keysById(published)
  const byKind = Object.fromEntries(
    (['creative', 'account', 'task', 'impairment', 'report', 'final', 'other'] as const).map((kind) => [
      kind,
      { expected: 0, received: 0, lost: 0, duplicated: 0, unexpected: 0 },
    ]),
  ) as Record<PushKind, KindCount>
  const lost: string[] = []
  const duplicated: string[] = []
  const unexpected: string[] = []
  const stale: string[] = []
  for (const id of owed.keys()) {
    const count = byKind[kindOf(id)]
    count.expected++
    const times = publishedKeys.get(id)?.size ?? 0
    const keys = Math.max(times, wire.get(id)?.size ?? 0)
    if (times === 0 && [...(wire.get(id) ?? [])].some((key) => buyer.stale.has(key))) {
      // Delivered after the task's terminal status: the receiver keeps the terminal one (convergence).
      stale.push(`${id} (${owed.get(id)})`)
      count.received++
    } else if (times === 0) {
      lost.push(`${id} (${owed.get(id)})`)
      count.lost++
    } else count.received++
    if (keys > 1) {
      duplicated.push(
        `${id}: ${times} published, ${wire.get(id)?.size ?? 0} keys on the wire (${owed.get(id)})`,
      )
      count.duplicated++
    }
  }
  for (const id of new Set([...publishedKeys.keys(), ...wire.keys()])) {
    if (owed.has(id) || ledger.allowed.has(id)) continue
    unexpected.push(id)
    byKind[kindOf(id)].unexpected++
  }
  const listed = await buyer.listed()
  const listedMismatch: string[] = []
  for (const push of published)
    if (listed.get(push.key) !== 1) listedMismatch.push(`${push.key}: listed ${listed.get(push.key) ?? 0}`)
  const keys = new Set(published.map((push) => push.key))
  for (const [key, times] of listed)
    if (!keys.has(key)) listedMismatch.push(`${key}: listed ${times}, not seen`)
  return {
    expected: owed.size,
    received: owed.size - lost.length,
    lost,
    duplicated,
    unexpected,
    deliveries: buyer.deliveries(),
    stale,
    refused: Object.fromEntries(buyer.refused),
    listedMismatch,
    byKind,
  }
}
