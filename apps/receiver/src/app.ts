/**
 * The receiver's HTTP surface, built from its dependencies and nothing else: webhook deliveries go to the
 * @adwire/webhooks receiver core untouched (raw bytes), the admin API and the stream under /api, the page at /.
 */
import { createWebhookReceiver, type ReceivedEvent, type ReceiverLogEntry } from '@adwire/webhooks'
import { Hono } from 'hono'
import type { InboxTransactionHandle, ReceiverDatabase } from './db/types.js'
import type { ReceiverDeps } from './deps.js'
import { renderPage } from './page/html.js'
import { registrationCache } from './registrations.js'
import { apiRoutes } from './routes/api.js'
import { errorResponse } from './routes/errors.js'

/** Outcomes recorded as verification failures for the page: the delivery was refused for what it is. */
const RECORDED = new Set<ReceiverLogEntry['outcome']>(['rejected', 'conflict'])

/**
 * @example
 * const runtime = await openDeps(parseEnv())
 * serve({ fetch: createApp(runtime.deps).fetch, port: 4300 })
 */
export function createApp(deps: ReceiverDeps): Hono {
  const { db } = deps.storage
  const registrations = registrationCache(db, {
    fetch: deps.keyFetch,
    agentFetch: deps.agentFetch,
    allowInsecure: deps.allowInsecureKeyUrls,
  })

  /** Stores a published event (in the inbox's `transaction` when there is one). */
  async function record(
    event: ReceivedEvent,
    target: ReceiverDatabase,
    transaction?: InboxTransactionHandle,
  ): Promise<void> {
    const recorded = await target.recordEvent(
      {
        registrationId: event.registrationId,
        sender: event.sender,
        idempotencyKey: event.idempotencyKey,
        ...(event.operationId ? { operationId: event.operationId } : {}),
        ...(event.taskId ? { taskId: event.taskId } : {}),
        ...(event.taskType ? { taskType: event.taskType } : {}),
        ...(event.status ? { status: event.status } : {}),
        terminal: event.terminal,
        receivedAt: event.receivedAt,
        payload: new TextDecoder().decode(event.body),
        forward: deps.forwarding,
        takeover: event.takeover,
      },
      transaction,
    )
    if (recorded.recovered) {
      // The previous owner stored it and died before acknowledging: the same publication, now acknowledged.
      deps.log({
        recovered: 'unacknowledged_publication',
        registration: event.registrationId,
        key: event.idempotencyKey,
      })
    } else if (recorded.publications > 1) {
      deps.log({ alarm: 'published_twice', registration: event.registrationId, key: event.idempotencyKey })
    }
  }

  // The transactional inbox when the storage has one (nonce, claim, convergence and event in one commit,
  // shared by the deliveries arriving together); claim → publish → complete otherwise.
  const inbox = deps.publication === 'claims' ? undefined : deps.storage.createInbox(record)

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

  const receiver = createWebhookReceiver({
    registration: (request) => registrations.get(new URL(request.url).pathname.split('/').pop() ?? ''),
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

  const app = new Hono()
  app.use('*', async (c, next) => {
    await next()
    c.header('x-content-type-options', 'nosniff')
    c.header('referrer-policy', 'no-referrer')
  })

  app.get('/health', async (c) => {
    try {
      await db.cursor()
      return c.json({
        status: 'ok',
        database: db.kind,
        ...(deps.forwarding ? { forwarding: { pending: await db.pendingForwards() } } : {}),
      })
    } catch {
      return c.json({ status: 'unavailable', database: db.kind }, 503)
    }
  })

  app.all('/webhooks/:id', (c) => receiver.handle(asPublic(c.req.raw, deps.publicUrl)))

  app.route('/api', apiRoutes(deps))

  app.get('/', (c) => {
    const { html, csp } = renderPage()
    return c.html(html, 200, { 'content-security-policy': csp, 'cache-control': 'no-store' })
  })

  app.notFound((c) => errorResponse(c, 404, 'not_found', `no route for ${c.req.method} ${c.req.path}`))
  app.onError((error, c) => {
    deps.log({ error: 'unhandled', path: c.req.path, message: error.message })
    return errorResponse(c, 500, 'internal_error', 'the receiver failed to answer; see its log')
  })
  return app
}

/**
 * Behind a proxy the seller signs the public URL (`@target-uri`), not the one the process sees: with
 * PUBLIC_URL set, the core sees the delivery at `{PUBLIC_URL}/webhooks/{id}?{query}`. The Host header is
 * left alone, so the `@authority` check still compares what arrived with what was signed.
 */
function asPublic(request: Request, publicUrl: string | undefined): Request {
  if (!publicUrl) return request
  const received = new URL(request.url)
  const id = received.pathname.split('/').pop() ?? ''
  const url = `${publicUrl}/webhooks/${id}${received.search}`
  return new Request(url, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    duplex: 'half',
  } as RequestInit)
}
