/**
 * The receiver's webhook deliveries: the @adwire/webhooks receiver core over the service's registrations and
 * store (the transactional inbox when the storage has one), and a node:http fast path for them. The fast path
 * hands the core the request's own fields and writes its answer straight to the socket: no web `Request` or
 * `Response` is built for a delivery (the Hono route stays for everything else and for unusual requests).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import {
  BodyTooLargeError,
  createWebhookReceiver,
  type ReceivedEvent,
  type ReceiverAnswer,
  type ReceiverLogEntry,
  type WebhookReceiver,
} from '@adwire/webhooks'
import { answerEarly } from '@adwire/service-kit'
import type { InboxTransactionHandle, NewEvent, ReceiverDatabase, RecordedEvent } from './db/types.js'
import type { ReceiverDeps } from './deps.js'
import { eventRow, recordedLog } from './event-row.js'
import { registrationCache } from './registrations.js'

/** Outcomes recorded as verification failures for the page: the delivery was refused for what it is. */
const RECORDED = new Set<ReceiverLogEntry['outcome']>(['rejected', 'conflict'])

/** Headers every answer of the service carries (the Hono app sets them on the others). */
export const SECURITY_HEADERS = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' }

/**
 * The receiver core of the service.
 *
 * @example
 * const deliveries = createDeliveries(runtime.deps)
 * const answer = await deliveries.answer({ method: 'POST', url, headers, readBody: async () => bytes })
 */
export function createDeliveries(deps: ReceiverDeps): WebhookReceiver {
  const { db } = deps.storage
  const registrations = registrationCache(db, {
    fetch: deps.keyFetch,
    agentFetch: deps.agentFetch,
    allowInsecure: deps.allowInsecureKeyUrls,
  })

  /** The row of a published event. */
  const rowOf = (event: ReceivedEvent): NewEvent => eventRow(event, deps.forwarding)

  function logRecorded(event: ReceivedEvent, recorded: RecordedEvent): void {
    const entry = recordedLog(event, recorded)
    if (entry) deps.log(entry)
  }

  /** Stores a published event (in the inbox's `transaction` when there is one). */
  async function record(
    event: ReceivedEvent,
    target: ReceiverDatabase,
    transaction?: InboxTransactionHandle,
  ): Promise<void> {
    logRecorded(event, await target.recordEvent(rowOf(event), transaction))
  }

  /** Stores the events an inbox group publishes, at once. */
  async function recordGroup(
    events: readonly ReceivedEvent[],
    target: ReceiverDatabase,
    transaction?: InboxTransactionHandle,
  ): Promise<void> {
    const recorded = await target.recordEvents(events.map(rowOf), transaction)
    for (const [index, event] of events.entries()) logRecorded(event, recorded[index]!)
  }

  // The transactional inbox when the storage has one (nonce, claim, convergence and event in one commit,
  // shared by the deliveries arriving together); claim → publish → complete otherwise.
  // On SQLite, with SQLITE_INBOX_THREAD, the inbox runs on a worker thread (its statements and commits off
  // this event loop).
  const inbox =
    deps.publication === 'claims'
      ? undefined
      : deps.storage.createWorkerInbox && deps.inboxWorker === true
        ? deps.storage.createWorkerInbox({ forwarding: deps.forwarding, onReport: deps.log })
        : deps.storage.createInbox(record, recordGroup)

  async function publish(event: ReceivedEvent): Promise<void> {
    await record(event, db)
    deps.onWrite()
  }

  function logDelivery(entry: ReceiverLogEntry): void {
    if (inbox && entry.outcome === 'published') deps.onWrite()
    if (entry.outcome !== 'published' && entry.outcome !== 'duplicate') deps.log({ delivery: entry })
    if (!RECORDED.has(entry.outcome) || !entry.registrationId || !entry.code) return
    db.recordFailure({
      registrationId: entry.registrationId,
      code: entry.code,
      httpStatus: entry.status,
      ...(entry.message ? { message: entry.message.slice(0, 300) } : {}),
      at: deps.now?.() ?? Date.now() / 1000,
    }).then(deps.onWrite, (error: unknown) =>
      deps.log({ failure: 'not_recorded', error: (error as Error).message }),
    )
  }

  return createWebhookReceiver({
    registration: (request) => registrations.get(registrationIdOf(request.url)),
    claims: deps.storage.claims,
    convergence: deps.storage.convergence,
    replayStore: deps.storage.replay,
    ...(inbox ? { inbox } : { publish }),
    log: logDelivery,
    // A service: signatures are checked on the thread pool while the event loop serves the next delivery.
    offload: 'always',
    limits: { leaseSeconds: deps.deliveryLeaseSeconds },
    ...(deps.now ? { now: deps.now } : {}),
  })
}

/**
 * A delivery URL whose last path segment is a plain id, with no query or fragment: that segment is what the URL
 * parser's path would end with, so it is read without parsing the URL.
 */
const PLAIN_DELIVERY_URL = /\/webhooks\/([A-Za-z0-9_-]{1,128})$/

/** The registration id of a delivery URL: the last segment of its path. */
function registrationIdOf(url: string): string {
  const plain = url.includes('?') || url.includes('#') ? null : PLAIN_DELIVERY_URL.exec(url)
  return plain ? plain[1]! : (new URL(url).pathname.split('/').pop() ?? '')
}

/** A delivery path the fast path takes: `/webhooks/{id}` with a plain id and no query. */
const DELIVERY_PATH = /^\/webhooks\/[A-Za-z0-9_-]{1,128}$/

/**
 * A node:http handler for `listen({ intercept })`: takes the POSTs to `/webhooks/{id}` and answers them with
 * `receiver.answer`, leaving anything else (other methods, queries, odd paths or hosts) to the Hono app, which
 * answers it the same way through web objects. Behind a proxy (`publicUrl`) the core sees the public URL, as
 * the Hono route does.
 *
 * @example
 * await listen({ port: 4300, fetch: app.fetch, intercept: deliveryIntercept(deliveries, env.publicUrl) })
 */
export function deliveryIntercept(
  receiver: WebhookReceiver,
  publicUrl: string | undefined,
): (request: IncomingMessage, response: ServerResponse) => boolean {
  return (request, response) => {
    const path = request.url ?? ''
    if (request.method !== 'POST' || !DELIVERY_PATH.test(path)) return false
    let url: string
    try {
      // The URL @hono/node-server would build (the host normalised by the URL parser), or the public one.
      url = publicUrl ? `${publicUrl}${path}` : new URL(`http://${request.headers.host ?? ''}${path}`).href
    } catch {
      return false
    }
    receiver
      .answer({
        method: 'POST',
        url,
        headers: fieldsOf(request.rawHeaders),
        readBody: (limit) => readLimited(request, limit),
      })
      .then(
        (answer) => write(request, response, answer),
        () =>
          write(request, response, {
            status: 500,
            headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
            body: JSON.stringify({
              error: { code: 'internal_error', message: 'the receiver failed to answer; see its log' },
            }),
          }),
      )
    return true
  }
}

/** Header fields by lower-cased name, repeated ones kept in order (the verifier joins them as RFC 9421 says). */
function fieldsOf(raw: readonly string[]): Record<string, string[]> {
  const fields: Record<string, string[]> = Object.create(null) as Record<string, string[]>
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index]!.toLowerCase()
    const values = fields[name]
    if (values) values.push(raw[index + 1]!)
    else fields[name] = [raw[index + 1]!]
  }
  return fields
}

/** The body bytes as received, refused beyond `limit` (declared or actual) without reading further. */
function readLimited(request: IncomingMessage, limit: number): Promise<Uint8Array> {
  const declared = request.headers['content-length']
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(new BodyTooLargeError(limit))
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    // Once settled, later events change nothing: no error is built for the close every request ends with.
    let settled = false
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength
      if (size > limit) {
        request.off('data', onData)
        request.off('end', onEnd)
        settled = true
        reject(new BodyTooLargeError(limit))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      settled = true
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))
    }
    request.on('data', onData)
    request.once('end', onEnd)
    request.once('error', (error) => {
      if (settled) return
      settled = true
      reject(error)
    })
    // The client went away before the end of its body.
    request.once('close', () => {
      if (settled) return
      settled = true
      reject(new Error('the request was closed before its body ended'))
    })
  })
}

function write(request: IncomingMessage, response: ServerResponse, answer: ReceiverAnswer): void {
  if (response.headersSent || response.destroyed) return
  // Like every JSON answer of the service (service-kit's listener adds it on the fetch path): a final newline.
  const json = /json/i.test(String(answer.headers['content-type'] ?? ''))
  const body = json && !answer.body.endsWith('\n') ? `${answer.body}\n` : answer.body
  const headers: Record<string, string | number> = {
    ...answer.headers,
    ...SECURITY_HEADERS,
  }
  // Answered before the whole body arrived (413, 404): the rest is read and dropped for a moment so the sender
  // sees this answer rather than a reset connection (which it would retry), then the socket is closed.
  answerEarly(request, response, answer.status, headers, body)
}
