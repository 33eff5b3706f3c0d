import type { EnqueueResult, OutboxEntry } from '../stores.js'
import { WebhookError } from '../errors.js'
import { coalescedAttemptAt, coalesceKeyOf, KeyedSerializer, mediaBuyOfCoalesceKey } from './coalesce.js'
import { deliverEntry } from './deliver.js'
import { checkDeliveryReport, DELIVERY_TASK_TYPE } from './delivery-report.js'
import { buildA2ABody, buildMcpBody, type BuiltBody } from './envelope.js'
import { mediaBuyWebhooks, taskWebhooks, type SenderCore } from './lifecycle.js'
import { resolveSenderOptions } from './options.js'
import {
  refuseBearerForMutatingTask,
  resolveRegistration,
  storedHeaders,
  type ResolvedRegistration,
} from './registration.js'
import { fireActivity } from './fire-log.js'
import type {
  CoalesceClass,
  NotifyOptions,
  SubscriberEvent,
  SubscriberRegistration,
  TaskEvent,
  WebhookRegistration,
  WebhookSender,
  WebhookSenderOptions,
} from './types.js'
import { createWorker } from './worker.js'

const invalid = (message: string) => new WebhookError('INVALID_REQUEST', message)
/** Refusal of an event for closed media buys; `closedBuys` names them. */
class AfterFinalError extends WebhookError {
  constructor(readonly closedBuys: readonly string[]) {
    super(
      'webhook_after_final',
      `media buy ${closedBuys.join(', ')} already had its final delivery report: nothing more fires for it`,
    )
  }
}
const afterFinal = (buys: readonly string[]) => new AfterFinalError(buys)

/** What the outbox entry of an event records besides its bytes. */
interface EntryFacts {
  /** The media buys it concerns. */
  readonly mediaBuyIds: readonly string[]
  /** The final delivery report: sent only after every earlier entry of its buys to the same URL. */
  readonly barrier: boolean
  readonly coalesce?: { readonly key: string; readonly policy: CoalesceClass }
}

/**
 * Creates the seller-side webhook sender (AdCP webhooks.mdx; security.mdx "Webhook callbacks"). `notify`
 * builds the payload for the registration's channel, serialises it once, and stores it in the durable outbox
 * before resolving; the worker (`start`) then delivers it: every attempt signed anew over those exact bytes
 * (RFC 9421 with a fresh nonce, or the legacy HMAC/Bearer scheme the buyer registered), retried with
 * exponential back-off and jitter on 5xx, 429, network errors, timeouts and 401s (a `webhook_*` signature
 * error too: a receiver misconfiguration, never a reason to drop the push or the destination), within
 * `retryHorizonSeconds`; a 409 stops that delivery. Every
 * attempt is a webhook_activity row. A restarted sender on the same outbox delivers what a crashed one left.
 *
 * A media buy's end (`mediaBuy().finish`, or a `final` delivery report through `notify`): its impairments
 * still coalescing are made due, then the final report is stored as a barrier that the outbox never leases
 * while an earlier entry of the buy to the same URL is pending, so it reaches that receiver after them at any
 * concurrency and across senders sharing the outbox; the outbox also records the buy as closed and refuses
 * every later entry of it (`webhook_after_final`), after a restart too. Other entries, and entries to other
 * URLs (a failing push URL), never hold anything back.
 *
 * @example
 * const stores = openSqliteStores({ path: './data/seller.db' })
 * const sender = createWebhookSender({ outbox: stores.outbox, key: privateJwk })
 * sender.start()
 * const registration = { channel: 'adcp', config: request.push_notification_config, context: request.context } as const
 * const task = sender.task(registration, { task_id: 'task_1', task_type: 'create_media_buy', status: 'submitted' })
 * await task.update('working', { result: { percentage: 40 } })
 * await task.update('completed', { result: createMediaBuyResponse })
 * process.on('SIGTERM', () => void sender.stop().then(() => stores.close()))
 */
export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const resolved = resolveSenderOptions(options)
  const { outbox, key } = options
  const log = options.log ?? (() => undefined)
  const worker = createWorker({
    outbox,
    now: resolved.now,
    concurrency: resolved.concurrency,
    leaseSeconds: resolved.leaseSeconds,
    pollIntervalMs: resolved.pollIntervalMs,
    deliver: (entry) => deliverEntry(entry, { ...resolved, outbox, key, log }),
    log,
  })
  const horizon = resolved.retry.horizonSeconds
  const serializer = new KeyedSerializer()
  /**
   * Media buys known to be closed (final report queued or being queued, or closed without one): a cache of
   * the outbox's durable closed records, which the outbox checks again atomically on every enqueue.
   */
  const closed = new Set<string>()
  /** Buys whose final report (or close) this sender is queuing right now. */
  const closing = new Set<string>()
  /** Buys the caller declared terminal ({@link SenderCore.markClosed}): closed on its word. */
  const declared = new Set<string>()

  /**
   * Which of `buys` are closed. A buy the cache knows closed, that this sender is not closing right now and
   * the caller did not declare terminal, is checked against the outbox first: the caller's transaction that
   * queued its final report may have rolled back since, and the outbox (which checks again atomically on every
   * enqueue, waiting for a transaction under way) is the record.
   */
  async function closedOf(buys: readonly string[]): Promise<string[]> {
    const known = buys.filter((buy) => closed.has(buy))
    const sure = known.filter((buy) => closing.has(buy) || declared.has(buy))
    if (sure.length > 0 || known.length === 0) return sure
    const durable = await outbox.closedMediaBuys(known)
    for (const buy of known) if (!durable.includes(buy)) closed.delete(buy)
    return durable
  }

  /** Refuses (`webhook_after_final`) an event of closed buys. */
  async function refuseClosed(buys: readonly string[]): Promise<void> {
    const found = await closedOf(buys)
    if (found.length > 0) throw afterFinal(found)
  }
  /** Enqueues under way per media buy, which a final report waits for before flushing. */
  const inFlight = new Map<string, Set<Promise<void>>>()
  const legacyLogged = new WeakSet<object>()

  function coalesceClass(notifyOptions: NotifyOptions): CoalesceClass | undefined {
    const coalesce = notifyOptions.coalesce
    if (coalesce === undefined) return undefined
    if (typeof coalesce.key !== 'string' || coalesce.key === '')
      throw invalid('coalesce.key must be a non-empty string')
    const name = coalesce.class ?? 'impairment'
    const policy = resolved.coalesce.get(name)
    if (!policy)
      throw invalid(`unknown coalesce class "${name}" (${[...resolved.coalesce.keys()].join(', ')})`)
    return policy
  }

  /** Throws `webhook_after_final` (and remembers the buys) when the outbox refused an entry of closed buys. */
  function refused(result: EnqueueResult): EnqueueResult {
    if (result.closed === undefined) return result
    for (const buy of result.closed) closed.add(buy)
    throw afterFinal(result.closed)
  }

  async function enqueue(
    registration: ResolvedRegistration,
    built: BuiltBody,
    facts: EntryFacts,
  ): Promise<void> {
    const { coalesce } = facts
    const entry = {
      id: crypto.randomUUID(),
      destination: registration.destination,
      url: registration.url,
      idempotencyKey: built.idempotencyKey,
      body: built.body,
      headers: storedHeaders(registration),
      mediaBuyIds: facts.mediaBuyIds,
      barrier: facts.barrier,
    }
    if (!coalesce || coalesce.policy.maxDelaySeconds === 0) {
      const now = resolved.now()
      refused(
        await outbox.enqueue({
          ...entry,
          coalesceKey: null,
          createdAt: now,
          nextAttemptAt: now,
          deadlineAt: now + horizon,
        }),
      )
    } else {
      await serializer.run(`${entry.destination}\n${coalesce.key}`, async () => {
        const now = resolved.now()
        const earlier = (await outbox.pending(entry.destination)).filter(
          (pending) => pending.coalesceKey === coalesce.key && pending.attempts === 0,
        )
        // The push carries the oldest pending change too: its maximum delay counts from that change.
        const groupStart = Math.min(now, ...earlier.map((pending) => pending.createdAt))
        const nextAttemptAt = coalescedAttemptAt(coalesce.policy, now, groupStart)
        const { superseded } = refused(
          await outbox.enqueue({
            ...entry,
            coalesceKey: coalesce.key,
            createdAt: groupStart,
            nextAttemptAt,
            deadlineAt: nextAttemptAt + horizon,
          }),
        )
        for (const id of superseded)
          log({ event: 'superseded', id, destination: entry.destination, message: `replaced by ${entry.id}` })
      })
    }
    log({
      event: 'enqueued',
      id: entry.id,
      destination: entry.destination,
      idempotencyKey: entry.idempotencyKey,
    })
    worker.wake()
  }

  /**
   * Makes the impairments still queued (coalescing) for these buys due now, so that their final report, which
   * the outbox holds back until every earlier entry of its buys is settled, does not wait for the window.
   */
  async function flushQueued(mediaBuyIds: ReadonlySet<string>): Promise<void> {
    const concerns = (entry: OutboxEntry) => {
      const scoped = entry.coalesceKey === null ? undefined : mediaBuyOfCoalesceKey(entry.coalesceKey)
      return (
        (scoped !== undefined && mediaBuyIds.has(scoped)) ||
        entry.mediaBuyIds.some((id) => mediaBuyIds.has(id))
      )
    }
    const groups = new Map<string, { destination: string; coalesceKey: string }>()
    for (const entry of await outbox.pending()) {
      if (entry.coalesceKey !== null && concerns(entry) && entry.attempts === 0)
        groups.set(`${entry.destination}\n${entry.coalesceKey}`, {
          destination: entry.destination,
          coalesceKey: entry.coalesceKey!,
        })
    }
    for (const [lock, group] of groups) {
      await serializer.run(lock, async () => {
        const now = resolved.now()
        const queued = (await outbox.pending(group.destination)).filter(
          (entry) =>
            entry.coalesceKey === group.coalesceKey && entry.attempts === 0 && entry.nextAttemptAt > now,
        )
        const latest = queued.at(-1)
        if (!latest) return
        // The same key and bytes, due now; the outbox supersedes the delayed copy in the same transaction
        // (or refuses it, leaving the delayed copy, when another sender closed the buy meanwhile).
        const { attempts: _attempts, ...copy }: OutboxEntry = latest
        await outbox.enqueue({
          ...copy,
          id: crypto.randomUUID(),
          nextAttemptAt: now,
          deadlineAt: now + horizon,
        })
      })
    }
  }

  const byteLength = (text: string) => new TextEncoder().encode(text).length

  /** Notes a fire in the fire log (when the caller asked and one is configured), after its entry is stored. */
  async function noteFire(
    registration: ResolvedRegistration,
    built: BuiltBody,
    notifyOptions: NotifyOptions,
    notificationType: string,
  ): Promise<void> {
    const facts = notifyOptions.fire
    if (!facts || !options.fireLog) return
    await options.fireLog.put(facts.owner, {
      idempotency_key: built.idempotencyKey,
      destination: registration.destination,
      notification_type: facts.notification_type ?? notificationType,
      ...(facts.sequence_number !== undefined ? { sequence_number: facts.sequence_number } : {}),
      url: registration.url,
      payload_size_bytes: byteLength(built.body),
      ...(registration.subscriberId !== undefined ? { subscriber_id: registration.subscriberId } : {}),
      ...(facts.media_buy_id !== undefined ? { media_buy_id: facts.media_buy_id } : {}),
      fired_at: resolved.now(),
    })
  }

  function logLegacy(registration: ResolvedRegistration, config: object): void {
    if (!registration.legacy || legacyLogged.has(config)) return
    legacyLogged.add(config)
    log({
      event: 'legacy_auth',
      destination: registration.destination,
      message: `the registration for ${registration.url} asked for deprecated ${registration.legacy.scheme} authentication`,
    })
  }

  /** An event-specific payload to one notification_configs[] subscriber. */
  async function notifySubscriber(
    registrationInput: SubscriberRegistration,
    event: SubscriberEvent,
    notifyOptions: NotifyOptions,
  ): Promise<string> {
    const registration = resolveRegistration(registrationInput)
    if (!event || typeof event.notification_type !== 'string' || event.notification_type === '')
      throw invalid('a subscriber event needs a notification_type')
    if (typeof event.payload !== 'object' || event.payload === null || Array.isArray(event.payload))
      throw invalid('a subscriber event needs a payload object')
    logLegacy(registration, registrationInput.config)
    const buys = notifyOptions.mediaBuyId !== undefined ? [notifyOptions.mediaBuyId] : []
    await refuseClosed(buys)
    const idempotencyKey = crypto.randomUUID()
    const firedAt = new Date(Math.floor(resolved.now()) * 1000).toISOString().replace('.000Z', 'Z')
    const built: BuiltBody = {
      idempotencyKey,
      body: JSON.stringify({
        idempotency_key: idempotencyKey,
        notification_type: event.notification_type,
        fired_at: firedAt,
        subscriber_id: registration.subscriberId,
        ...event.payload,
      }),
    }
    await enqueue(registration, built, { mediaBuyIds: buys, barrier: false })
    await noteFire(registration, built, notifyOptions, event.notification_type)
    return idempotencyKey
  }

  async function notify(
    registrationInput: WebhookRegistration | SubscriberRegistration,
    eventInput: TaskEvent | SubscriberEvent,
    notifyOptions: NotifyOptions = {},
  ): Promise<string> {
    if (registrationInput?.channel === 'subscriber')
      return notifySubscriber(registrationInput, eventInput as SubscriberEvent, notifyOptions)
    const event = eventInput as TaskEvent
    const registration = resolveRegistration(registrationInput)
    if (resolved.refuseBearerForMutatingTasks && registration.legacy?.scheme === 'Bearer')
      refuseBearerForMutatingTask(registrationInput.config.authentication, event?.task_type)
    logLegacy(registration, registrationInput.config)
    const report = event?.task_type === DELIVERY_TASK_TYPE ? checkDeliveryReport(event) : undefined
    if (report && notifyOptions.coalesce) throw invalid('delivery reports are exempt from coalescence')
    const policy = coalesceClass(notifyOptions)
    const buys = new Set([
      ...(notifyOptions.mediaBuyId !== undefined ? [notifyOptions.mediaBuyId] : []),
      ...(report?.mediaBuyIds ?? []),
    ])
    await refuseClosed([...buys])
    const timestamp = new Date(resolved.now() * 1000).toISOString()
    const built =
      registration.channel === 'adcp'
        ? buildMcpBody(registration, event, timestamp)
        : buildA2ABody(registration, event, timestamp, registration.a2aVersion ?? resolved.a2aVersion)
    const final = report?.notificationType === 'final'
    if (!final) {
      const coalesce =
        policy && notifyOptions.coalesce
          ? { key: coalesceKeyOf(notifyOptions.mediaBuyId, notifyOptions.coalesce.key), policy }
          : undefined
      const work = enqueue(registration, built, {
        mediaBuyIds: [...buys],
        barrier: false,
        ...(coalesce ? { coalesce } : {}),
      })
      for (const buy of buys) {
        const set = inFlight.get(buy) ?? new Set()
        set.add(work)
        inFlight.set(buy, set)
      }
      try {
        await work
      } finally {
        for (const buy of buys) {
          inFlight.get(buy)?.delete(work)
          if (inFlight.get(buy)?.size === 0) inFlight.delete(buy)
        }
      }
      await noteFire(registration, built, notifyOptions, event.task_type)
      return built.idempotencyKey
    }
    for (const buy of buys) closed.add(buy)
    for (const buy of buys) closing.add(buy)
    try {
      // Closed by an earlier run of this sender, or by another sender on the same outbox.
      const already = await outbox.closedMediaBuys([...buys])
      if (already.length > 0) throw afterFinal(already)
      // Events of these buys accepted just before must be queued before the flush looks for them.
      await Promise.allSettled([...buys].flatMap((buy) => [...(inFlight.get(buy) ?? [])]))
      await flushQueued(buys)
      // A barrier: the outbox sends it only after every earlier entry of these buys to its URL, at any concurrency.
      await enqueue(registration, built, { mediaBuyIds: [...buys], barrier: true })
    } catch (error) {
      // Not queued: the buys are not closed (unless the outbox says so), the caller may try again.
      const confirmed = error instanceof AfterFinalError ? error.closedBuys : []
      for (const buy of buys) if (!confirmed.includes(buy)) closed.delete(buy)
      throw error
    } finally {
      for (const buy of buys) closing.delete(buy)
    }
    await noteFire(registration, built, notifyOptions, event.task_type)
    return built.idempotencyKey
  }

  const core: SenderCore = {
    notify: (registration, event, notifyOptions) => notify(registration, event, notifyOptions),
    async closeMediaBuy(mediaBuyId) {
      if ((await closedOf([mediaBuyId])).length > 0) return false
      closed.add(mediaBuyId)
      closing.add(mediaBuyId)
      try {
        if ((await outbox.closedMediaBuys([mediaBuyId])).length > 0) return false
        await Promise.allSettled([...(inFlight.get(mediaBuyId) ?? [])])
        await flushQueued(new Set([mediaBuyId]))
        return (await outbox.closeMediaBuys([mediaBuyId], resolved.now())).length > 0
      } catch (error) {
        closed.delete(mediaBuyId)
        throw error
      } finally {
        closing.delete(mediaBuyId)
      }
    },
    markClosed(mediaBuyId) {
      closed.add(mediaBuyId)
      declared.add(mediaBuyId)
    },
    isClosed: async (mediaBuyId) => (await closedOf([mediaBuyId])).length > 0,
  }

  return {
    notify: notify as WebhookSender['notify'],
    task(registration, init) {
      // Refused when the task starts, so the agent can answer the task request with the error at once.
      if (resolved.refuseBearerForMutatingTasks)
        refuseBearerForMutatingTask(registration?.config?.authentication, init?.task_type)
      return taskWebhooks(core, registration, init)
    },
    mediaBuy: (init) => mediaBuyWebhooks(core, init),
    activity: (destination, limit) => outbox.activity(destination, limit),
    webhookActivity: async (destination, owner, limit) =>
      options.fireLog ? fireActivity(outbox, options.fireLog, destination, owner, limit) : [],
    start: () => worker.start(),
    stop: () => worker.stop(),
    drain: () => worker.drain(),
    wake: () => worker.wake(),
  }
}
