/**
 * One delivery attempt of a leased outbox entry: sign the stored bytes anew (RFC 9421 with a fresh nonce and
 * `created`, or the legacy scheme the buyer registered, never both), POST them, classify the answer and record
 * the attempt as a webhook_activity row under the lease's fence.
 */
import { bearerHeaders, signHmacWebhook, signWebhook, type AdcpJwk } from '@adwire/http-signatures'
import type { LeasedOutboxEntry, OutboxStore } from '../stores.js'
import type { ResolvedSenderOptions } from './options.js'
import { readStoredHeaders } from './registration.js'
import { outcomeOf, type AttemptResult } from './retry.js'
import type { SenderLogEntry } from './types.js'

export interface DeliverContext extends ResolvedSenderOptions {
  readonly outbox: OutboxStore
  readonly key: AdcpJwk
  readonly log: (entry: SenderLogEntry) => void
}

const encoder = new TextEncoder()
const SNIPPET_BYTES = 2_048

/** The headers of one attempt: signed over the stored bytes at `now`. */
async function attemptHeaders(
  entry: LeasedOutboxEntry,
  bytes: Uint8Array,
  context: DeliverContext,
  now: number,
): Promise<Record<string, string>> {
  const { headers, legacy } = readStoredHeaders(entry.headers)
  if (legacy?.scheme === 'HMAC-SHA256')
    return { ...headers, ...(await signHmacWebhook(bytes, { secret: legacy.credentials, now })) }
  if (legacy?.scheme === 'Bearer') return { ...headers, ...bearerHeaders(legacy.credentials) }
  const signed = await signWebhook(
    { method: 'POST', url: entry.url, headers, body: bytes },
    { key: context.key, now },
  )
  return { ...signed.headers }
}

/** The receiver's `error.code` from a small JSON error body, when it sent one. */
async function errorCode(response: Response): Promise<string | undefined> {
  if (response.ok) {
    await response.body?.cancel().catch(() => undefined)
    return undefined
  }
  const reader = response.body?.getReader()
  if (!reader) return undefined
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    while (size < SNIPPET_BYTES) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      size += value.length
    }
  } catch {
    return undefined
  } finally {
    await reader.cancel().catch(() => undefined)
  }
  if (size >= SNIPPET_BYTES) return undefined
  try {
    const bytes = new Uint8Array(size)
    let offset = 0
    for (const chunk of chunks) {
      bytes.set(chunk, offset)
      offset += chunk.length
    }
    const parsed = JSON.parse(new TextDecoder().decode(bytes)) as { error?: { code?: unknown } }
    const code = parsed?.error?.code
    return typeof code === 'string' && /^[\w.:-]{1,64}$/.test(code) ? code : undefined
  } catch {
    return undefined
  }
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } })?.cause
  const code = typeof cause?.code === 'string' ? cause.code : undefined
  const message = error instanceof Error ? error.message : String(error)
  return `connection error: ${code ?? (typeof cause?.message === 'string' ? cause.message : message)}`
}

/** Sends one attempt and reports how it ended (never throws). */
async function send(entry: LeasedOutboxEntry, context: DeliverContext, now: number): Promise<AttemptResult> {
  const bytes = encoder.encode(entry.body)
  let headers: Record<string, string>
  try {
    headers = await attemptHeaders(entry, bytes, context, Math.floor(now))
  } catch (error) {
    return { kind: 'local_error', message: `signing failed: ${(error as Error).message}` }
  }
  const controller = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    controller.abort()
  }, context.timeoutMs)
  try {
    const response = await context.fetch(entry.url, {
      method: 'POST',
      headers,
      body: bytes,
      redirect: 'manual',
      signal: controller.signal,
    })
    const code = await errorCode(response)
    return { kind: 'response', status: response.status, headers: response.headers, ...(code ? { code } : {}) }
  } catch (error) {
    if (timedOut) return { kind: 'timeout', message: `no answer within ${context.timeoutMs} ms` }
    return { kind: 'connection_error', message: describeNetworkError(error) }
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Attempts a leased entry once and records the outcome (webhook_activity row included). An entry past its
 * retry horizon is recorded as failed without being sent. Never throws: store errors are logged.
 */
export async function deliverEntry(entry: LeasedOutboxEntry, context: DeliverContext): Promise<void> {
  const attempt = entry.attempts + 1
  const startedAt = context.now()
  const result: AttemptResult =
    startedAt > entry.deadlineAt
      ? { kind: 'local_error', message: 'retry horizon passed before the attempt' }
      : await send(entry, context, startedAt)
  const now = context.now()
  const outcome = outcomeOf(result, {
    now,
    attempt,
    deadlineAt: entry.deadlineAt,
    policy: context.retry,
    random: context.random,
  })
  const base = { id: entry.id, destination: entry.destination, idempotencyKey: entry.idempotencyKey, attempt }
  try {
    const recorded = await context.outbox.record(entry.id, entry.fence, outcome, now)
    if (!recorded) {
      context.log({
        ...base,
        event: 'lease_lost',
        message: 'the lease expired before the attempt was recorded',
      })
      return
    }
  } catch (error) {
    context.log({ ...base, event: 'store_error', message: (error as Error).message })
    return
  }
  if (outcome.kind === 'delivered')
    context.log({ ...base, event: 'delivered', httpStatus: outcome.httpStatus })
  else
    context.log({
      ...base,
      event: outcome.kind,
      ...(outcome.httpStatus !== undefined ? { httpStatus: outcome.httpStatus } : {}),
      ...(outcome.kind === 'retry' ? { nextAttemptAt: outcome.nextAttemptAt } : {}),
      ...(outcome.error !== undefined ? { message: outcome.error } : {}),
    })
}
