/**
 * The receiver's HTTP surface, built from its dependencies and nothing else: webhook deliveries go to the
 * @adwire/webhooks receiver core untouched (raw bytes), the admin API and the stream under /api, the page at /.
 */
import type { WebhookReceiver } from '@adwire/webhooks'
import { Hono } from 'hono'
import { createDeliveries, SECURITY_HEADERS } from './deliveries.js'
import type { ReceiverDeps } from './deps.js'
import { renderPage } from './page/html.js'
import { apiRoutes } from './routes/api.js'
import { errorResponse } from './routes/errors.js'
import { publicRelayStatus, relayStatus } from './relay-status.js'

/**
 * @example
 * const runtime = await openDeps(parseEnv())
 * serve({ fetch: createApp(runtime.deps).fetch, port: 4300 })
 */
export function createApp(deps: ReceiverDeps, receiver: WebhookReceiver = createDeliveries(deps)): Hono {
  const { db } = deps.storage
  const app = new Hono()
  app.use('*', async (c, next) => {
    await next()
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value)
  })

  app.get('/health', async (c) => {
    try {
      await db.cursor()
      return c.json({
        status: 'ok',
        database: db.kind,
        ...(deps.forwarding ? { forwarding: publicRelayStatus(await relayStatus(deps)) } : {}),
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
