/**
 * The admin API: registrations, events, verification failures and stream tickets. Every route needs the
 * admin token (`Authorization: Bearer`), except the stream, which also takes a ticket (see stream.ts).
 */
import { Hono, type Context } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { z } from 'zod'
import type { ReceiverDeps } from '../deps.js'
import { parseRegistrationInput } from '../registration-input.js'
import { relayStatus } from '../relay-status.js'
import { newRegistrationId, publicRegistration, REGISTRATION_ID } from '../registrations.js'
import { eventView, failureView } from '../views.js'
import { adminProblem, errorResponse } from './errors.js'
import { streamRoute } from './stream.js'

/** Largest registration body: a JWKS is at most 64 KiB (security.mdx MAX_JWKS_BYTES), plus the rest. */
const MAX_BODY = 128 * 1024

const ListQuery = z.object({
  registration: z.string().regex(REGISTRATION_ID, 'not a registration id'),
  limit: z.coerce.number().int().min(1).max(10_000).default(1000),
})

export function apiRoutes(deps: ReceiverDeps): Hono {
  const { db } = deps.storage
  const now = deps.now ?? (() => Date.now() / 1000)
  const api = new Hono()
  const baseUrl = (requestUrl: string) => deps.publicUrl ?? new URL(requestUrl).origin

  streamRoute(api, deps)

  api.use('*', async (c, next) => {
    const problem = adminProblem(c, deps.admin)
    if (problem) return problem
    await next()
    c.header('cache-control', 'no-store')
  })

  // A declared length over the limit is refused unread; a chunked body is read only up to the limit. The
  // rest is not read: the answer closes the connection.
  const limited = bodyLimit({
    maxSize: MAX_BODY,
    onError: (c) =>
      errorResponse(c, 413, 'payload_too_large', `at most ${MAX_BODY} bytes`, undefined, {
        connection: 'close',
      }),
  })

  api.post('/registrations', limited, async (c) => {
    const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase()
    if (type !== 'application/json') {
      return errorResponse(c, 415, 'unsupported_media_type', 'send the registration as application/json')
    }
    const text = await c.req.text()
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch (error) {
      return errorResponse(c, 400, 'invalid_json', `the body is not JSON: ${(error as Error).message}`)
    }
    const parsed = parseRegistrationInput(body, { allowInsecureKeyUrls: deps.allowInsecureKeyUrls })
    if ('problems' in parsed) {
      return errorResponse(
        c,
        400,
        'invalid_registration',
        parsed.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; '),
        parsed.problems,
      )
    }
    const record = { id: newRegistrationId(), ...parsed.input, createdAt: now() }
    await db.insertRegistration(record)
    deps.log({ registration: 'created', id: record.id, auth: record.auth.mode })
    const url = `${baseUrl(c.req.url)}/webhooks/${record.id}`
    return c.json({ id: record.id, url }, 201, { location: `/api/registrations/${record.id}` })
  })

  api.get('/registrations', async (c) => {
    const base = baseUrl(c.req.url)
    const records = await db.listRegistrations()
    return c.json({ registrations: records.map((record) => publicRegistration(record, base)) })
  })

  api.get('/registrations/:id', async (c) => {
    const id = c.req.param('id')
    const record = REGISTRATION_ID.test(id) ? await db.getRegistration(id) : undefined
    if (!record) return errorResponse(c, 404, 'unknown_registration', `no registration ${id}`)
    return c.json(publicRegistration(record, baseUrl(c.req.url)))
  })

  const listQuery = async (c: Context) => {
    const parsed = ListQuery.safeParse(c.req.query())
    if (!parsed.success) {
      const details = parsed.error.issues.map((issue) => ({
        path: issue.path.join('.'),
        message:
          issue.path[0] === 'registration' && issue.code === 'invalid_type' ? 'required' : issue.message,
      }))
      const message = details.map((d) => `${d.path}: ${d.message}`).join('; ')
      return { problem: errorResponse(c, 400, 'invalid_query', message, details) }
    }
    if (!(await db.getRegistration(parsed.data.registration))) {
      return {
        problem: errorResponse(c, 404, 'unknown_registration', `no registration ${parsed.data.registration}`),
      }
    }
    return { query: parsed.data }
  }

  api.get('/events', async (c) => {
    const { problem, query } = await listQuery(c)
    if (problem) return problem
    const events = await db.listEvents(query.registration, query.limit)
    return c.json({ events: events.map(eventView) })
  })

  // The relay's state with the last error's text (which /health leaves out); 404 without a sink.
  api.get('/relay', async (c) => {
    if (!deps.forwarding) return errorResponse(c, 404, 'not_found', 'no sink is configured (SINK_URL)')
    return c.json(await relayStatus(deps))
  })

  api.get('/failures', async (c) => {
    const { problem, query } = await listQuery(c)
    if (problem) return problem
    const failures = await db.listFailures(query.registration, query.limit)
    return c.json({
      failures: failures.map((failure) => {
        const { registration_id: _registration, ...rest } = failureView(failure)
        return rest
      }),
    })
  })

  api.post('/stream-tickets', (c) => {
    const { ticket, expiresAt } = deps.admin.issueTicket(now())
    return c.json({ ticket, expires_at: new Date(expiresAt * 1000).toISOString() }, 201)
  })

  return api
}
