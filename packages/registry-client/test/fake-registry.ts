/**
 * A small registry on a real node:http server (127.0.0.1, port 0) for the client's unit tests: a few canned
 * lookups and an in-memory change feed with the registry's cursor semantics and SSE stream.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { RegistryFeedEvent } from '../src/index.js'

export const API_KEY = 'sk_test_key'

export interface Recorded {
  method: string
  url: URL
  authorization: string | undefined
  body: unknown
}

export interface FakeRegistry {
  url: string
  requests: Recorded[]
  events: RegistryFeedEvent[]
  /** Appends an event with a fresh, increasing id. */
  addEvent(type?: string, entityId?: string): RegistryFeedEvent
  /** Answers the next `count` feed requests with this status. */
  failFeed(status: number, count?: number): void
  /** Closes open SSE streams (the server keeps running). */
  dropStreams(): void
  close(): Promise<void>
}

let sequence = 0
/** Increasing ids shaped like UUIDv7 (sortable as strings, like the registry's). */
function nextId(): string {
  return `01900000-0000-7000-8000-${(++sequence).toString(16).padStart(12, '0')}`
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

const error = (res: ServerResponse, status: number, code: string, message: string): void =>
  json(res, status, { error: code, message })

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  return text ? JSON.parse(text) : undefined
}

const brand = (domain: string) => ({
  canonical_id: domain,
  canonical_domain: domain,
  brand_name: domain === 'acme.example' ? 'Acme' : 'Other',
  source: 'brand_json',
})

export async function startFakeRegistry(): Promise<FakeRegistry> {
  const requests: Recorded[] = []
  const events: RegistryFeedEvent[] = []
  const streams = new Set<ServerResponse>()
  let feedFailures: { status: number; count: number } | undefined

  const matches = (type: string, filter: string | null): boolean =>
    !filter ||
    filter
      .split(',')
      .some((item) => (item.endsWith('*') ? type.startsWith(item.slice(0, -1)) : type === item))

  /** The feed page after `cursor`, or a status when the cursor is unknown. */
  const page = (cursor: string | null, types: string | null, limit: number) => {
    if (cursor && !events.some((event) => event.event_id === cursor)) return 410
    const after = events.filter(
      (event) => (!cursor || event.event_id > cursor) && matches(event.event_type, types),
    )
    const slice = after.slice(0, limit)
    return {
      events: slice,
      cursor: slice.at(-1)?.event_id ?? cursor,
      has_more: after.length > limit,
      freshness: {
        generated_at: new Date().toISOString(),
        latest_event_created_at: null,
        lag_seconds: null,
        retention_days: 90,
      },
    }
  }

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1')
      const body = req.method === 'POST' ? await readBody(req) : undefined
      requests.push({ method: req.method ?? 'GET', url, authorization: req.headers.authorization, body })
      const route = `${req.method} ${url.pathname}`
      const q = (name: string) => url.searchParams.get(name)
      switch (route) {
        case 'GET /api/brands/resolve': {
          const domain = q('domain') ?? ''
          if (!/^[a-z0-9.-]+$/.test(domain)) return json(res, 400, { error: 'Invalid domain format' })
          if (domain === 'nobody.example') return error(res, 404, 'not_found', `no brand for ${domain}`)
          return json(res, 200, brand(domain))
        }
        case 'POST /api/brands/resolve/bulk': {
          const { domains } = body as { domains: string[] }
          return json(res, 200, {
            results: Object.fromEntries(domains.map((d) => [d, d === 'nobody.example' ? null : brand(d)])),
          })
        }
        case 'GET /api/brands/find':
          return json(res, 200, { results: [{ ...brand('acme.example'), domain: 'acme.example' }] })
        case 'POST /api/registry/expand/product-identifiers': {
          const request = body as { agent_url: string; publisher_properties: unknown[] }
          return json(res, 200, {
            agent_url: request.agent_url,
            properties: [
              {
                publisher_domain: 'news.example',
                property_id: 'site',
                property_name: 'News',
                property_type: 'website',
                identifiers: [{ type: 'domain', value: 'news.example' }],
                tags: ['news'],
              },
            ],
            identifiers: [
              {
                type: 'domain',
                value: 'news.example',
                property_id: 'site',
                publisher_domain: 'news.example',
              },
            ],
            property_count: 1,
            identifier_count: 1,
            generated_at: new Date().toISOString(),
            echoed: request.publisher_properties,
          })
        }
        case 'GET /api/registry/validate/property-authorization':
          return json(res, 200, {
            agent_url: q('agent_url'),
            identifier_type: q('identifier_type'),
            identifier_value: q('identifier_value'),
            authorized: q('agent_url') === 'https://sales.example/mcp',
            checked_at: new Date().toISOString(),
          })
        case 'POST /api/brands/setup-my-brand': {
          if (req.headers.authorization !== `Bearer ${API_KEY}`)
            return error(res, 401, 'unauthorized', 'sign in')
          const input = body as { domain: string; brand_name: string }
          if (input.domain !== 'mine.example')
            return error(res, 403, 'domain_not_owned', `${input.domain} is not owned by your organization`)
          const hosted = `http://127.0.0.1/hosted/${input.domain}/brand.json`
          return json(res, 200, {
            domain: input.domain,
            has_brand_json: true,
            hosted_brand_json_url: hosted,
            pointer_snippet: JSON.stringify({ authoritative_location: hosted }),
          })
        }
        case 'POST /api/properties/hosted/mine.example/claim':
          if (req.headers.authorization !== `Bearer ${API_KEY}`)
            return error(res, 401, 'unauthorized', 'sign in')
          return json(res, 200, {
            success: true,
            domain: 'mine.example',
            authoritative_location: 'http://127.0.0.1/hosted/mine.example/adagents.json?adcp_claim=tok',
            instructions: 'place the pointer, then verify',
          })
        case 'POST /api/properties/hosted/taken.example/claim':
          return error(res, 409, 'domain_locked', 'taken.example is bound to another organization')
        case 'POST /api/properties/hosted/mine.example/verify-origin':
          return json(res, 200, {
            verified: true,
            reason: 'authoritative_location_pointer',
            checked_at: new Date().toISOString(),
            bound_org_id: 'org_mine',
          })
        case 'GET /api/registry/publisher':
          return json(res, 200, {
            domain: q('domain'),
            member: null,
            adagents_valid: true,
            hosting: { mode: 'self', expected_url: `https://${q('domain')}/.well-known/adagents.json` },
            properties: [],
            authorized_agents: [{ url: 'https://sales.example/mcp', source: 'adagents_json' }],
            ...(q('include') === 'placements' ? { placements: [] } : {}),
          })
        case 'GET /api/registry/stats':
          res.writeHead(502, { 'content-type': 'text/plain' })
          return res.end('upstream is down')
        case 'GET /api/registry/feed': {
          if (req.headers.authorization !== `Bearer ${API_KEY}`)
            return error(res, 401, 'unauthorized', 'sign in')
          if (feedFailures && feedFailures.count > 0) {
            feedFailures.count--
            return error(res, feedFailures.status, 'unavailable', 'try again')
          }
          const result = page(q('cursor'), q('types'), Number(q('limit') ?? 100))
          if (result === 410)
            return json(res, 410, { error: 'cursor_expired', message: 'Cursor is older than retention' })
          return json(res, 200, result)
        }
        case 'GET /api/registry/feed/stream': {
          if (req.headers.authorization !== `Bearer ${API_KEY}`)
            return error(res, 401, 'unauthorized', 'sign in')
          let cursor = q('cursor')
          const first = page(cursor, q('types'), 100)
          if (first === 410)
            return json(res, 410, { error: { code: 'cursor_expired', message: 'unknown cursor' } })
          res.writeHead(200, {
            'content-type': 'text/event-stream; charset=utf-8',
            'cache-control': 'no-cache',
          })
          streams.add(res)
          const tick = () => {
            const next = page(cursor, q('types'), 100)
            if (next === 410) return
            if (next.events.length > 0) {
              cursor = next.cursor
              res.write(`event: feed\r\ndata: ${JSON.stringify(next)}\r\n\r\n`)
            } else {
              res.write(
                `: keep-alive\n\nevent: heartbeat\ndata: ${JSON.stringify({ generated_at: new Date().toISOString(), cursor })}\n\n`,
              )
            }
          }
          tick()
          const timer = setInterval(tick, 30)
          res.on('close', () => {
            clearInterval(timer)
            streams.delete(res)
          })
          return
        }
        default:
          return error(res, 404, 'not_found', `no route ${route}`)
      }
    })().catch((cause: unknown) => error(res, 500, 'internal_error', String(cause)))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    requests,
    events,
    addEvent(type = 'authorization.granted', entityId = 'news.example') {
      const event = {
        event_id: nextId(),
        event_type: type,
        entity_type: type.split('.')[0],
        entity_id: entityId,
        payload: { agent_url: 'https://sales.example/mcp', publisher_domain: entityId },
        actor: 'crawler',
        created_at: new Date().toISOString(),
      } as RegistryFeedEvent
      events.push(event)
      return event
    },
    failFeed(status, count = 1) {
      feedFailures = { status, count }
    },
    dropStreams() {
      for (const stream of streams) stream.end()
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((err) => (err ? reject(err) : resolve()))
      }),
  }
}
