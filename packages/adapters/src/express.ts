/**
 * `@adwire/adapters/express`: the webhook receiver and the RFC 9421 request verifier in Express 5, on the raw
 * body bytes. Mount the webhook route before (or without) `express.json()`; it reads the body stream itself, or
 * takes the bytes `express.raw()` or {@link captureRawBody} kept. When a JSON parser consumed the body and kept
 * no bytes, it refuses with {@link RawBodyUnavailableError} (500) instead of failing every signature.
 *
 * @example
 * app.post('/webhooks/adcp', webhookHandler((request) => receiver.handle(request)))
 * app.use('/adcp', verifySignedRequests({ keys: buyerJwks, profile: '3.2', replayStore }))
 * app.post('/adcp/create_media_buy', (req, res) => res.json({ signer: signatureOf(res) }))
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { VerifiedRequest } from '@adwire/http-signatures'
import { RawBodyUnavailableError } from './errors.js'
import { bodyConsumed, headersOf, readRawBody, toWebRequest, writeWebResponse } from './node.js'
import { DEFAULT_MAX_BODY, tooLarge, urlOf, verifyOrRefuse, type SignedRequestOptions } from './verify.js'

export { RawBodyUnavailableError } from './errors.js'
export type { SignedRequestOptions } from './verify.js'

type Req = IncomingMessage & { body?: unknown; rawBody?: unknown; originalUrl?: string }
type Res = ServerResponse & { locals: Record<string, unknown> }
type Next = (error?: unknown) => void

const EXPRESS_FIX =
  'Mount the AdCP route before app.use(express.json()), or give the JSON parser a place to keep the bytes: ' +
  'app.use(express.json({ verify: captureRawBody })) (captureRawBody from @adwire/adapters/express).'

/**
 * For `express.json({ verify: captureRawBody })` (or `express.raw`, `express.text`): keeps the exact bytes on
 * `req.rawBody`, so the adapters can verify a body the app also parses.
 */
export function captureRawBody(req: IncomingMessage, _res: ServerResponse, bytes: Uint8Array): void {
  ;(req as Req).rawBody = bytes
}

/** The raw bytes a parser kept (`express.raw()` body, or {@link captureRawBody}), if any. */
function keptBytes(req: Req): Uint8Array | undefined {
  if (req.rawBody instanceof Uint8Array) return req.rawBody
  if (req.body instanceof Uint8Array) return req.body
  return undefined
}

export interface WebhookHandlerOptions {
  /** The scheme and host the sender signed (`@target-uri`). Default: `http://` and the `Host` header. */
  readonly origin?: string
}

/**
 * An Express route handler around a web handler (`receiver.handle`): the answer (200, 401, 409, 413, 415, …)
 * is the receiver's. A consumed body without kept bytes goes to `next` as {@link RawBodyUnavailableError}.
 */
export function webhookHandler(
  handle: (request: Request) => Response | Promise<Response>,
  options: WebhookHandlerOptions = {},
) {
  return (req: Req, res: ServerResponse, next: Next): void => {
    const answer = async () => {
      const body = keptBytes(req)
      const request = toWebRequest(req, {
        ...(options.origin === undefined ? {} : { origin: options.origin }),
        ...(body === undefined ? {} : { body }),
        // Under a mounted router Express rewrites req.url; the sender signed the full path.
        ...(req.originalUrl === undefined ? {} : { path: req.originalUrl }),
        fix: EXPRESS_FIX,
      })
      await writeWebResponse(res, await handle(request))
    }
    answer().catch(next)
  }
}

/**
 * Express middleware verifying buyer-signed requests (the AdCP RFC 9421 request profile) on the exact body
 * bytes. The outcome is `res.locals.adcpSignature` ({@link signatureOf}); a failure answers 401 with
 * `WWW-Authenticate: Signature error="request_signature_…"` (503 when a key source is unreachable). When it
 * reads the body itself it also parses JSON bodies into `req.body`.
 */
export function verifySignedRequests(options: SignedRequestOptions) {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY
  return (req: Req, res: Res, next: Next): void => {
    const run = async () => {
      const method = req.method ?? 'GET'
      let body = keptBytes(req)
      if (body === undefined && method !== 'GET' && method !== 'HEAD') {
        if (bodyConsumed(req)) throw new RawBodyUnavailableError(EXPRESS_FIX)
        body = await readRawBody(req, limit)
        if (body === undefined) return refuse(res, tooLarge(limit))
        req.rawBody = body
        req.body = parseJson(req, body)
      }
      const outcome = await verifyOrRefuse(
        {
          method,
          url: urlOf(options.origin, req.headers.host, req.originalUrl ?? req.url),
          headers: headersOf(req.rawHeaders),
          body,
        },
        options,
      )
      if (!outcome.ok) return refuse(res, outcome)
      res.locals.adcpSignature = outcome.result
      next()
    }
    run().catch(next)
  }
}

/** What {@link verifySignedRequests} established for this request: `verified` (with the signer), `unsigned`, … */
export function signatureOf(res: { locals: Record<string, unknown> }): VerifiedRequest | undefined {
  return res.locals.adcpSignature as VerifiedRequest | undefined
}

function parseJson(req: Req, body: Uint8Array): unknown {
  const type = req.headers['content-type']?.split(';')[0]?.trim().toLowerCase()
  if (type !== 'application/json' || body.byteLength === 0) return undefined
  try {
    return JSON.parse(new TextDecoder().decode(body))
  } catch {
    return undefined // the route sees no parsed body; the bytes stay on req.rawBody
  }
}

function refuse(
  res: ServerResponse,
  outcome: { status: number; headers: Record<string, string>; body: unknown },
) {
  return writeWebResponse(
    res,
    Response.json(outcome.body, { status: outcome.status, headers: outcome.headers }),
  )
}
