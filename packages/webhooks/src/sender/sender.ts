import type { OutboxEntry } from '../stores.js'
import { WebhookError } from '../errors.js'
import { coalescedAttemptAt, coalesceKeyOf, KeyedSerializer, mediaBuyOfCoalesceKey } from './coalesce.js'
import { deliverEntry } from './deliver.js'
import { checkDeliveryReport, DELIVERY_TASK_TYPE } from './delivery-report.js'
import { buildA2ABody, buildMcpBody, type BuiltBody } from './envelope.js'
import { mediaBuyWebhooks, taskWebhooks, type SenderCore } from './lifecycle.js'
import { resolveSenderOptions } from './options.js'
import { resolveRegistration, storedHeaders, type ResolvedRegistration } from './registration.js'
import type { CoalesceClass, NotifyOptions, TaskEvent, WebhookSender, WebhookSenderOptions } from './types.js'
import { createWorker } from './worker.js'

const invalid = (message: string) => new WebhookError('INVALID_REQUEST', message)

/**
 * Creates the seller-side webhook sender (AdCP webhooks.mdx; security.mdx "Webhook callbacks"). `notify`
 * builds the payload for the registration's channel, serialises it once, and stores it in the durable outbox
 * before resolving; the worker (`start`) then delivers it: every attempt signed anew over those exact bytes
 * (RFC 9421 with a fresh nonce, or the legacy HMAC/Bearer scheme the buyer registered), retried with
 * exponential back-off and jitter on 5xx, 429, network errors, timeouts and plain 401s, within
 * `retryHorizonSeconds`; a 409, or a 401 naming a `webhook_*` signature error, stops that delivery. Every
 * attempt is a webhook_activity row. A restarted sender on the same outbox delivers what a crashed one left.
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
  /** Media buys whose final report is queued (or being queued): nothing more fires for them. */
  const closed = new Set<string>()
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

  async function enqueue(
    registration: ResolvedRegistration,
    built: BuiltBody,
    coalesce?: { key: string; policy: CoalesceClass },
  ): Promise<void> {
    const entry = {
      id: crypto.randomUUID(),
      destination: registration.destination,
      url: registration.url,
      idempotencyKey: built.idempotencyKey,
      body: built.body,
      headers: storedHeaders(registration),
    }
    if (!coalesce || coalesce.policy.maxDelaySeconds === 0) {
      const now = resolved.now()
      await outbox.enqueue({
        ...entry,
        coalesceKey: null,
        createdAt: now,
        nextAttemptAt: now,
        deadlineAt: now + horizon,
      })
    } else {
      await serializer.run(`${entry.destination}\n${coalesce.key}`, async () => {
        const now = resolved.now()
        const earlier = (await outbox.pending(entry.destination)).filter(
          (pending) => pending.coalesceKey === coalesce.key && pending.attempts === 0,
        )
        // The push carries the oldest pending change too: its maximum delay counts from that change.
        const groupStart = Math.min(now, ...earlier.map((pending) => pending.createdAt))
        const nextAttemptAt = coalescedAttemptAt(coalesce.policy, now, groupStart)
        const { superseded } = await outbox.enqueue({
          ...entry,
          coalesceKey: coalesce.key,
          createdAt: groupStart,
          nextAttemptAt,
          deadlineAt: nextAttemptAt + horizon,
        })
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

  /** Makes the impairments still queued (coalescing) for these buys due now, before their final report. */
  async function flushQueued(mediaBuyIds: ReadonlySet<string>): Promise<void> {
    const groups = new Map<string, { destination: string; coalesceKey: string }>()
    for (const entry of await outbox.pending()) {
      const buy = entry.coalesceKey === null ? undefined : mediaBuyOfCoalesceKey(entry.coalesceKey)
      if (buy !== undefined && mediaBuyIds.has(buy) && entry.attempts === 0)
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
        // The same key and bytes, due now; the outbox supersedes the delayed copy in the same transaction.
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

  async function notify(
    registrationInput: Parameters<WebhookSender['notify']>[0],
    event: TaskEvent,
    notifyOptions: NotifyOptions = {},
  ): Promise<string> {
    const registration = resolveRegistration(registrationInput)
    if (registration.legacy && !legacyLogged.has(registrationInput.config)) {
      legacyLogged.add(registrationInput.config)
      log({
        event: 'legacy_auth',
        destination: registration.destination,
        message: `the registration for ${registration.url} asked for deprecated ${registration.legacy.scheme} authentication`,
      })
    }
    const report = event?.task_type === DELIVERY_TASK_TYPE ? checkDeliveryReport(event) : undefined
    if (report && notifyOptions.coalesce) throw invalid('delivery reports are exempt from coalescence')
    const policy = coalesceClass(notifyOptions)
    const buys = new Set([
      ...(notifyOptions.mediaBuyId !== undefined ? [notifyOptions.mediaBuyId] : []),
      ...(report?.mediaBuyIds ?? []),
    ])
    for (const buy of buys)
      if (closed.has(buy))
        throw new WebhookError(
          'webhook_after_final',
          `media buy ${buy} already had its final delivery report: nothing more fires for it`,
        )
    const timestamp = new Date(resolved.now() * 1000).toISOString()
    const built =
      registration.channel === 'adcp'
        ? buildMcpBody(registration, event, timestamp)
        : buildA2ABody(registration, event, timestamp)
    const final = report?.notificationType === 'final'
    if (!final) {
      const coalesce =
        policy && notifyOptions.coalesce
          ? { key: coalesceKeyOf(notifyOptions.mediaBuyId, notifyOptions.coalesce.key), policy }
          : undefined
      const work = enqueue(registration, built, coalesce)
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
      return built.idempotencyKey
    }
    for (const buy of buys) closed.add(buy)
    try {
      // Events of these buys accepted just before must be queued before the flush looks for them.
      await Promise.allSettled([...buys].flatMap((buy) => [...(inFlight.get(buy) ?? [])]))
      await flushQueued(buys)
      await enqueue(registration, built)
    } catch (error) {
      // Not queued: the buy is not closed, the caller may try again.
      for (const buy of buys) closed.delete(buy)
      throw error
    }
    return built.idempotencyKey
  }

  const core: SenderCore = {
    notify,
    async closeMediaBuy(mediaBuyId) {
      if (closed.has(mediaBuyId)) return
      closed.add(mediaBuyId)
      await Promise.allSettled([...(inFlight.get(mediaBuyId) ?? [])])
      await flushQueued(new Set([mediaBuyId]))
    },
    markClosed: (mediaBuyId) => void closed.add(mediaBuyId),
    isClosed: (mediaBuyId) => closed.has(mediaBuyId),
  }

  return {
    notify,
    task: (registration, init) => taskWebhooks(core, registration, init),
    mediaBuy: (init) => mediaBuyWebhooks(core, init),
    activity: (destination, limit) => outbox.activity(destination, limit),
    start: () => worker.start(),
    stop: () => worker.stop(),
    drain: () => worker.drain(),
  }
}
