/**
 * `@adwire/adapters/fastify`: the webhook receiver and the RFC 9421 request verifier in Fastify 5, on the raw
 * body bytes. Fastify parses JSON before any handler runs, so both plugins install their own content-type
 * parser: {@link adcpWebhooks} passes the untouched body stream to the receiver (which checks size and media
 * type itself); {@link adcpRequestSigning} keeps the bytes beside the parsed JSON. A route that gets an already
 * parsed body refuses with {@link RawBodyUnavailableError} (500) instead of failing every signature.
 *
 * @example
 * await app.register(adcpWebhooks, { path: '/webhooks/adcp', handle: (request) => receiver.handle(request) })
 * await app.register(async (signed) => {
 *   await signed.register(adcpRequestSigning, { keys: buyerJwks, profile: '3.2', replayStore })
 *   signed.post('/adcp/create_media_buy', async (request) => ({ signer: request.adcpSignature }))
 * })
 */
import { Readable } from 'node:stream'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { VerifiedRequest } from '@adwire/http-signatures'
import { RawBodyUnavailableError } from './errors.js'
import { headersOf, internalError, toWebRequest } from './node.js'
import { DEFAULT_MAX_BODY, urlOf, verifyOrRefuse, type SignedRequestOptions } from './verify.js'

export { RawBodyUnavailableError } from './errors.js'
export type { SignedRequestOptions } from './verify.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** What {@link adcpRequestSigning} established: `verified` (with the signer), `unsigned`, or `unverified`. */
    adcpSignature?: VerifiedRequest
    /** The exact body bytes, kept by {@link adcpRequestSigning}. */
    adcpRawBody?: Uint8Array
  }
}

const FASTIFY_FIX =
  'Register the route with the adcpWebhooks plugin of @adwire/adapters/fastify (it installs a parser that ' +
  'keeps the bytes), or give its scope a parser that does: ' +
  "app.addContentTypeParser('*', (request, payload, done) => done(null, payload))."

export interface AdcpWebhooksOptions {
  /** The route, e.g. `/webhooks/adcp` (or `/webhooks/:registration`). */
  readonly path: string
  /** The web handler: `(request) => receiver.handle(request)`. */
  readonly handle: (request: Request) => Response | Promise<Response>
  /** The scheme and host the sender signed (`@target-uri`). Default: `http://` and the `Host` header. */
  readonly origin?: string
}

/**
 * A POST route answering with the receiver (200, 401, 409, 413, 415, …). Register it with `app.register`: its
 * content-type parser stays inside the plugin's scope and leaves the body stream untouched.
 */
export const adcpWebhooks: FastifyPluginAsync<AdcpWebhooksOptions> = async (scope, options) => {
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload))
  scope.post(options.path, (request, reply) => webhookReply(request, reply, options))
}

/**
 * Answers one delivery from `request.body`, which must be the raw stream or bytes (as {@link adcpWebhooks}
 * arranges). Use it in your own route only with such a parser.
 */
export async function webhookReply(
  request: FastifyRequest,
  reply: FastifyReply,
  options: Pick<AdcpWebhooksOptions, 'handle' | 'origin'>,
): Promise<FastifyReply> {
  const body = request.body
  const origin = options.origin === undefined ? {} : { origin: options.origin }
  try {
    let web: Request
    if (body instanceof Readable) {
      web = new Request(urlOf(options.origin, request.headers.host, request.url), {
        method: request.method,
        headers: headersOf(request.raw.rawHeaders),
        body: Readable.toWeb(body) as ReadableStream<Uint8Array>,
        duplex: 'half',
      } as RequestInit)
    } else if (body instanceof Uint8Array) {
      web = toWebRequest(request.raw, { ...origin, body, path: request.url })
    } else if (body === undefined || body === null) {
      web = toWebRequest(request.raw, { ...origin, path: request.url, fix: FASTIFY_FIX })
    } else {
      throw new RawBodyUnavailableError(FASTIFY_FIX)
    }
    const response = await options.handle(web)
    // Answered before the body was read (413): the rest of it would arrive as the next request on this socket.
    if (!request.raw.complete) reply.header('connection', 'close')
    return await send(reply, response)
  } catch (error) {
    request.log.error({ err: error }, 'AdCP webhook route failed')
    return send(reply, internalError(error))
  }
}

async function send(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  const bytes = Buffer.from(await response.arrayBuffer())
  reply.code(response.status)
  for (const [name, value] of response.headers) reply.header(name, value)
  return reply.send(bytes)
}

/**
 * Verifies buyer-signed requests (the AdCP RFC 9421 request profile) for the routes of the scope it is
 * registered in: replaces that scope's parsers with one that keeps the exact bytes (`request.adcpRawBody`)
 * beside the parsed JSON body, then checks each request before its handler. The outcome is
 * `request.adcpSignature`; a failure answers 401 with `WWW-Authenticate: Signature error="request_signature_…"`
 * (503 when a key source is unreachable).
 */
export const adcpRequestSigning: FastifyPluginAsync<SignedRequestOptions> = async (scope, options) => {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: limit }, (request, bytes, done) => {
    const raw = new Uint8Array(bytes as Buffer)
    request.adcpRawBody = raw
    const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase()
    if (type !== 'application/json') return done(null, raw)
    if (raw.byteLength === 0) return done(null, undefined)
    try {
      done(null, JSON.parse(new TextDecoder().decode(raw)))
    } catch {
      done(null, undefined) // the signature is checked on the bytes; the handler sees no parsed body
    }
  })
  scope.addHook('preHandler', async (request, reply) => {
    const hasBody = request.body !== undefined && request.body !== null
    if (hasBody && request.adcpRawBody === undefined) throw new RawBodyUnavailableError(FASTIFY_FIX)
    const outcome = await verifyOrRefuse(
      {
        method: request.method,
        url: urlOf(options.origin, request.headers.host, request.url),
        headers: headersOf(request.raw.rawHeaders),
        body: request.adcpRawBody,
      },
      options,
    )
    if (!outcome.ok) return reply.code(outcome.status).headers(outcome.headers).send(outcome.body)
    request.adcpSignature = outcome.result
  })
}
// Like fastify-plugin: the hook and parser apply to the scope that registers the plugin, not to a child.
;(adcpRequestSigning as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true
