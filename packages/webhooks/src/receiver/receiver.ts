import canonicalize from 'canonicalize'
import { DEFAULT_WEBHOOK_NONCE_RATE, nonceCapForRate } from '@adwire/http-signatures'
import { constantTimeEqual, sha256 } from '@adwire/http-signatures/internal'
import { WebhookError } from '../errors.js'
import { authenticate } from './authenticate.js'
import { BodyTooLargeError, canonicalJson, readBody, requireJson, tooLargeRejection } from './body.js'
import { readEnvelope, type Envelope } from './envelope.js'
import { registrationProblem } from './registration.js'
import {
  acceptInInbox,
  convergenceAnswer,
  publishFailed,
  storeUnavailable,
  unclaimedAnswer,
  type DeliveryBase,
} from './outcomes.js'
import { json, Rejection, rejectionAnswer, toResponse } from './respond.js'
import type { InboxDelivery } from '../inbox.js'
import type {
  IncomingDelivery,
  ReceivedEvent,
  ReceiverAnswer,
  ReceiverLimits,
  Registration,
  WebhookReceiver,
  WebhookReceiverOptions,
} from './types.js'

const DAY = 86_400

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))

/** node:crypto's one-shot hash where the runtime has it (Node ≥ 20.12, Bun, Deno, workerd with nodejs_compat). */
const nodeHash = (() => {
  try {
    const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process
    const module = runtime?.getBuiltinModule?.('node:crypto') as
      { hash?: (algorithm: string, data: string, encoding: 'hex') => string } | undefined
    return typeof module?.hash === 'function' ? module.hash : undefined
  } catch {
    return undefined
  }
})()

/**
 * SHA-256 of a string's UTF-8 bytes as hex: node:crypto's one-shot hash where there is one (no Hash object, no
 * promise, hex done natively), else WebCrypto.
 */
function sha256Hex(text: string): string | Promise<string> {
  if (nodeHash) return nodeHash('sha256', text, 'hex')
  return sha256(text).then((digest) => {
    let hex = ''
    for (const byte of digest) hex += HEX[byte]
    return hex
  })
}

/**
 * The `comparison` of a task observation: the SHA-256 of the JCS comparison record for a terminal status, `''`
 * for any other (stores read it only when `terminal`, so a non-terminal one is neither canonicalised nor hashed).
 */
function comparisonOf(envelope: Envelope): string | Promise<string> {
  return envelope.terminal ? sha256Hex(canonicalize(envelope.comparison ?? null) ?? '') : ''
}

/** One strict decoder for every delivery (`decode` without `stream` keeps no state between calls). */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true })

/**
 * The per-keyid replay cap in live nonces: an explicit `maxNoncesPerKey` wins, else `maxNonceRatePerKey`
 * (default 5,000 a second) times the 420 s a nonce can live.
 */
function nonceCap(limits: ReceiverLimits | undefined): number {
  const count = limits?.maxNoncesPerKey
  if (count !== undefined) {
    if (!(Number.isSafeInteger(count) && count > 0))
      throw new WebhookError(
        'webhook_receiver_options_invalid',
        `limits.maxNoncesPerKey must be a positive integer, not ${String(count)}`,
      )
    return count
  }
  const rate = limits?.maxNonceRatePerKey ?? DEFAULT_WEBHOOK_NONCE_RATE
  try {
    return nonceCapForRate(rate)
  } catch (error) {
    throw new WebhookError(
      'webhook_receiver_options_invalid',
      `limits.maxNonceRatePerKey must be a positive number of deliveries a second, not ${String(rate)}`,
      { cause: error },
    )
  }
}

/**
 * The idempotent webhook receiver core (AdCP 3.1 webhooks.mdx, security.mdx; 3.2 receiver rules). In order:
 * content type (415) and size (413) before hashing; the raw bytes verified in the registration's one auth mode
 * (401, `WWW-Authenticate: Signature error="…"` for RFC 9421); the envelope validated (400); then a durable
 * claim on (verified sender, idempotency_key) bound to the payload's RFC 8785 fingerprint: the first delivery
 * publishes and is acknowledged (200), a completed duplicate is 200 without republication, an identical one in
 * flight is 503, a changed payload is 409, a full keyspace 429, an unreachable store 503. Terminal outcomes
 * converge per (sender, task_id) across channels (MCP and A2A compared on status and result alone): first
 * terminal wins, later non-terminal is stale, a different terminal is 409. With `protocol: '3.1'` every
 * duplicate is 200 (first copy wins) and there is no convergence. A registration that cannot be used (a
 * property-list registration in a legacy mode, see {@link registrationProblem}) is refused with 401
 * `webhook_registration_invalid`.
 *
 * @example
 * const receiver = createWebhookReceiver({ registration: (request) => registrations.get(idFrom(request.url)),
 *   claims, convergence, replayStore, publish: async (event) => queue.put(event) })
 * app.post('/webhooks/:id', (c) => receiver.handle(c.req.raw))
 */
export function createWebhookReceiver(options: WebhookReceiverOptions): WebhookReceiver {
  if (!options.publish && !options.inbox)
    throw new WebhookError('webhook_receiver_options_invalid', 'give createWebhookReceiver publish or inbox')
  const limits = {
    maxBodyBytes: options.limits?.maxBodyBytes ?? 1_048_576,
    leaseSeconds: options.limits?.leaseSeconds ?? 30,
    retentionSeconds: Math.max(DAY, options.limits?.retentionSeconds ?? DAY),
    maxRecordsPerSender: options.limits?.maxRecordsPerSender ?? 1_000_000,
    maxNoncesPerKey: nonceCap(options.limits),
  }
  const clock = options.now ?? (() => Date.now() / 1000)
  const protocol = options.protocol ?? '3.2'
  const log = options.log ?? (() => {})

  async function receive(request: IncomingDelivery, registration: Registration): Promise<ReceiverAnswer> {
    const now = clock()
    requireJson(request.headers)
    const body = await request.readBody(limits.maxBodyBytes)
    const inbox = options.inbox
    // authenticate reads each member by value: an undefined one is an absent one.
    const { sender, nonce } = await authenticate(request, body, registration, {
      replayStore: options.replayStore,
      revocation: options.revocation,
      now,
      maxNoncesPerKey: limits.maxNoncesPerKey,
      deferNonce: inbox !== undefined,
      offload: options.offload,
    })
    let payload: unknown
    try {
      payload = JSON.parse(STRICT_UTF8.decode(body))
    } catch {
      throw new Rejection(400, 'invalid_json', 'the body is not UTF-8 JSON')
    }
    const envelope = readEnvelope(payload, registration.shape)
    if (
      registration.token !== undefined &&
      !(await constantTimeEqual(envelope.token ?? '', registration.token))
    ) {
      throw new Rejection(401, 'webhook_token_invalid', 'the delivery does not echo the registered token')
    }
    const hashed = sha256Hex(canonicalJson(payload))
    const fingerprint = typeof hashed === 'string' ? hashed : await hashed
    const idempotencyKey = envelope.idempotencyKey ?? `a2a:${envelope.taskId}:${fingerprint}`
    const retention = Math.max(limits.retentionSeconds, registration.retryHorizonSeconds ?? 0)
    const base = { registrationId: registration.id, sender, idempotencyKey }
    const answer = { protocol, log, now, leaseSeconds: limits.leaseSeconds }
    const claimInput = {
      namespace: 'webhook' as const,
      scope: sender,
      key: idempotencyKey,
      fingerprint,
      now,
      leaseSeconds: limits.leaseSeconds,
      retentionSeconds: retention,
      maxPerScope: limits.maxRecordsPerSender,
    }

    if (inbox) {
      const taskId = envelope.taskId
      const compared = protocol === '3.2' && taskId !== undefined ? comparisonOf(envelope) : undefined
      const observation =
        compared !== undefined && taskId !== undefined
          ? {
              sender,
              taskId,
              terminal: envelope.terminal,
              comparison: typeof compared === 'string' ? compared : await compared,
              deliveryKey: idempotencyKey,
              now,
              leaseSeconds: limits.leaseSeconds,
              retentionSeconds: retention,
            }
          : undefined
      // Members set one by one, in the same order, each only when present (no object spread per member).
      const delivery: Mutable<InboxDelivery> = {} as Mutable<InboxDelivery>
      if (nonce) delivery.nonce = nonce
      delivery.claim = claimInput
      if (observation) delivery.observation = observation
      if (envelope.notificationId) delivery.notificationId = envelope.notificationId
      delivery.event = eventOf(envelope, base, payload as Record<string, unknown>, body, now)
      return acceptInInbox(inbox, delivery, base, answer)
    }

    const claim = await options.claims.claim(claimInput)
    if (claim.kind !== 'claimed') return unclaimedAnswer(claim, base, answer)
    const ref = { namespace: 'webhook' as const, scope: sender, key: idempotencyKey, fence: claim.fence }
    return publishOwned(envelope, {
      ...base,
      takeover: claim.takeover,
      ref,
      fingerprint,
      retention,
      now,
      body,
      payload: payload as Record<string, unknown>,
      registration,
    })
  }

  async function publishOwned(
    envelope: Envelope,
    context: {
      registrationId: string
      sender: string
      idempotencyKey: string
      ref: { namespace: 'webhook'; scope: string; key: string; fence: string }
      fingerprint: string
      retention: number
      now: number
      body: Uint8Array
      payload: Record<string, unknown>
      registration: Registration
      takeover: boolean
    },
  ): Promise<ReceiverAnswer> {
    const { sender, idempotencyKey, ref, now } = context
    const base = { registrationId: context.registrationId, sender, idempotencyKey }
    const answer = { protocol, log, now, leaseSeconds: limits.leaseSeconds }
    const taskId = envelope.taskId
    const converge = protocol === '3.2' && taskId !== undefined
    const publish = options.publish
    try {
      if (!publish) throw new Error('createWebhookReceiver needs a publish callback or an inbox')
      if (converge) {
        const comparison = await comparisonOf(envelope)
        const observed = await options.convergence.observe({
          sender,
          taskId,
          terminal: envelope.terminal,
          comparison,
          deliveryKey: idempotencyKey,
          now,
          leaseSeconds: limits.leaseSeconds,
          retentionSeconds: context.retention,
        })
        if (observed === 'conflict' || observed === 'in_progress') await options.claims.release(ref)
        if (observed === 'duplicate' || observed === 'stale') await options.claims.complete(ref, now)
        if (observed !== 'proceed') return convergenceAnswer(observed, taskId, base, answer)
      }
      const reemission = await isReemission(envelope, sender, idempotencyKey, now, context.retention)
      const event: ReceivedEvent = {
        ...eventOf(envelope, base, context.payload, context.body, now),
        reemission,
        takeover: context.takeover,
      }
      try {
        await publish(event)
      } catch (error) {
        await options.claims.release(ref)
        if (converge && envelope.terminal) await options.convergence.release(sender, taskId, idempotencyKey)
        throw publishFailed(error)
      }
      if (converge && envelope.terminal) await options.convergence.settle(sender, taskId, idempotencyKey, now)
      const acknowledged = await options.claims.complete(ref, now)
      log({
        ...base,
        outcome: 'published',
        status: 200,
        ...(acknowledged ? {} : { message: 'lease lost before acknowledgement' }),
      })
      return json(200, { status: 'accepted' })
    } catch (error) {
      if (error instanceof Rejection) throw error
      // The store failed after the claim: give the claim back if we can and let the sender retry.
      await options.claims.release(ref).catch(() => {})
      throw storeUnavailable()
    }
  }

  /**
   * notification_id names one logical notification across deliveries: the same one under a new
   * idempotency_key is a re-emission (a changed payload needs a new key), not a retry.
   */
  async function isReemission(
    envelope: Envelope,
    sender: string,
    key: string,
    now: number,
    retention: number,
  ): Promise<boolean> {
    if (!envelope.notificationId) return false
    const claim = await options.claims.claim({
      namespace: 'webhook',
      scope: `${sender}#notification`,
      key: envelope.notificationId,
      fingerprint: key,
      now,
      leaseSeconds: 0,
      retentionSeconds: retention,
    })
    if (claim.kind === 'claimed') {
      await options.claims.complete(
        {
          namespace: 'webhook',
          scope: `${sender}#notification`,
          key: envelope.notificationId,
          fence: claim.fence,
        },
        now,
      )
      return false
    }
    return claim.kind === 'conflict'
  }

  async function answer(request: IncomingDelivery): Promise<ReceiverAnswer> {
    let registration: Registration | undefined
    try {
      registration = await options.registration(request)
      if (!registration)
        throw new Rejection(404, 'unknown_registration', 'no webhook is registered at this URL')
      const problem = registrationProblem(registration)
      if (problem) {
        // The buyer's configuration, not the delivery, is wrong: refused without reading the body. A plain
        // 401 (no Signature challenge) lets the seller retry once the registration is fixed.
        throw new Rejection(401, 'webhook_registration_invalid', problem)
      }
      if (request.method !== 'POST')
        throw new Rejection(405, 'method_not_allowed', 'webhooks are delivered with POST', {
          allow: 'POST',
        })
      return await receive(request, registration)
    } catch (error) {
      const rejection =
        error instanceof Rejection
          ? error
          : error instanceof BodyTooLargeError
            ? tooLargeRejection(error)
            : new Rejection(
                503,
                'store_unavailable',
                'the receiver cannot accept deliveries now; retry later',
                { 'retry-after': '5' },
                'unavailable',
              )
      log({
        ...(registration ? { registrationId: registration.id } : {}),
        outcome: rejection.outcome,
        status: rejection.status,
        code: rejection.code,
        message: rejection.message,
      })
      return rejectionAnswer(rejection)
    }
  }

  return {
    answer,
    async handle(request: Request): Promise<Response> {
      const delivery: IncomingDelivery = {
        method: request.method,
        url: request.url,
        headers: request.headers,
        readBody: (limit) => readBody(request, limit),
      }
      return toResponse(await answer(delivery))
    },
  }
}

/** The published event of a delivery, but for what the claim decides (`takeover`, `reemission`). */
function eventOf(
  envelope: Envelope,
  base: DeliveryBase,
  payload: Record<string, unknown>,
  body: Uint8Array,
  now: number,
): Omit<ReceivedEvent, 'takeover' | 'reemission'> {
  // The members of `base`, then the others, in this order, the optional ones only when set.
  const event = {
    registrationId: base.registrationId,
    sender: base.sender,
    idempotencyKey: base.idempotencyKey,
    shape: envelope.shape,
  } as Mutable<Omit<ReceivedEvent, 'takeover' | 'reemission'>>
  if (envelope.notificationId) event.notificationId = envelope.notificationId
  if (envelope.operationId) event.operationId = envelope.operationId
  if (envelope.taskId) event.taskId = envelope.taskId
  if (envelope.taskType) event.taskType = envelope.taskType
  if (envelope.status) event.status = envelope.status
  event.terminal = envelope.terminal
  event.data = envelope.data
  event.payload = payload
  event.body = body
  event.receivedAt = now
  return event
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }
