/**
 * `GET /api/stream`: server-sent events of new deliveries (`event: delivery`) and verification failures
 * (`event: failure`), from every instance on the database. Authenticated by the admin token (Bearer header)
 * or by a ticket from `POST /api/stream-tickets` (`?ticket=`: an EventSource cannot send headers). Each
 * message's id is a cursor (`<event seq>.<failure seq>`): EventSource sends it back as Last-Event-ID when it
 * reconnects, and the stream resumes after it. `?since=0.0` replays everything first; `?registration=ID`
 * narrows the stream to one registration.
 */
import type { Hono } from 'hono'
import { streamSSE } from 'hono/streaming'
import type { StreamCursor } from '../db/types.js'
import type { ReceiverDeps } from '../deps.js'
import { REGISTRATION_ID } from '../registrations.js'
import { failureView, streamEventView } from '../views.js'
import { adminProblem, errorResponse } from './errors.js'

const KEEPALIVE_MS = 15_000

function parseCursor(value: string | undefined): StreamCursor | undefined | 'invalid' {
  if (value === undefined || value === '') return undefined
  const match = /^(\d{1,15})\.(\d{1,15})$/.exec(value)
  return match ? { events: Number(match[1]), failures: Number(match[2]) } : 'invalid'
}

export function streamRoute(api: Hono, deps: ReceiverDeps): void {
  const now = deps.now ?? (() => Date.now() / 1000)
  api.get('/stream', async (c) => {
    const ticket = c.req.query('ticket')
    if (ticket !== undefined) {
      if (!deps.admin.checkTicket(ticket, now())) {
        return errorResponse(
          c,
          401,
          'invalid_ticket',
          'the stream ticket is invalid or expired; get a new one',
        )
      }
    } else {
      const problem = adminProblem(c, deps.admin)
      if (problem) return problem
    }
    const registrationId = c.req.query('registration')
    if (registrationId !== undefined && !REGISTRATION_ID.test(registrationId)) {
      return errorResponse(c, 400, 'invalid_query', 'registration: not a registration id', [
        { path: 'registration', message: 'not a registration id' },
      ])
    }
    const since = parseCursor(c.req.header('last-event-id') ?? c.req.query('since'))
    if (since === 'invalid') {
      return errorResponse(c, 400, 'invalid_query', 'since: expected <event seq>.<failure seq>', [
        { path: 'since', message: 'expected <event seq>.<failure seq>, e.g. 0.0' },
      ])
    }
    c.header('cache-control', 'no-store')
    c.header('x-accel-buffering', 'no')
    return streamSSE(c, async (stream) => {
      // Writes go out one after another, in the order the hub hands them over.
      let queue: Promise<unknown> = Promise.resolve()
      const subscription = await deps.hub.subscribe(
        { ...(registrationId ? { registrationId } : {}), ...(since ? { since } : {}) },
        (message, cursor) => {
          const data =
            message.kind === 'delivery' ? streamEventView(message.record) : failureView(message.record)
          const id = `${cursor.events}.${cursor.failures}`
          queue = queue.then(() => stream.writeSSE({ event: message.kind, id, data: JSON.stringify(data) }))
        },
      )
      // `ready` follows the subscription: whatever is written from now on will be streamed.
      queue = queue.then(() => stream.writeSSE({ event: 'ready', data: '{}', retry: 2000 }))
      stream.onAbort(() => subscription.close())
      while (!stream.aborted) {
        let timer: ReturnType<typeof setTimeout> | undefined
        const tick = new Promise<'tick'>(
          (resolve) => (timer = setTimeout(() => resolve('tick'), KEEPALIVE_MS)),
        )
        const outcome = await Promise.race([tick, subscription.ended.then(() => 'ended' as const)])
        clearTimeout(timer)
        if (outcome === 'ended') break
        queue = queue.then(() => stream.write(': keepalive\n\n'))
      }
      subscription.close()
      await queue.catch(() => {})
    })
  })
}
