/**
 * The one outbound `fetch` of adwire's Node services: a web-standard `fetch` (any method, a streamed `Response`)
 * whose connection goes to the address that was checked, over node:http and node:https.
 */
import http from 'node:http'
import https from 'node:https'
import { SignatureError } from '../errors.js'
import { pinTarget, type PinnedTarget, type TargetPolicy } from './pinned-target.js'

/** Options of {@link createPinnedFetch}. */
export interface PinnedFetchOptions extends TargetPolicy {
  /** Time to establish the TCP connection, in milliseconds. Default 5000. */
  readonly connectTimeoutMs?: number
  /** Time for the whole exchange (DNS, connect, TLS, headers, body), in milliseconds. Default 10000. */
  readonly timeoutMs?: number
  /** A response body larger than this is refused (declared) or cut (streamed), bytes. Default: no cap. */
  readonly maxBytes?: number
  /** Extra TLS options for https (a test CA, for instance). */
  readonly tls?: Pick<https.RequestOptions, 'ca' | 'rejectUnauthorized'>
  /** Sent as `user-agent` when the request has none. Default `adwire`. */
  readonly userAgent?: string
}

const NULL_BODY = new Set([101, 204, 205, 304])

/**
 * Creates a `fetch` that refuses unsafe destinations and pins the connection (AdCP 3.1 security.mdx
 * "SSRF-safe fetches"; adcp-notes §2.7): https only unless `allowHttp`; userinfo refused; the host name is
 * resolved once and every answer must pass {@link checkAddress} (loopback and private ranges only by policy);
 * the socket connects to the first checked address, so a second DNS answer (rebinding) cannot move it; TLS
 * verifies the certificate against the host name (SNI). Redirects are never followed: a 3xx throws
 * `fetch_refused` unless the request says `redirect: 'manual'` (then it is returned, without body). Responses
 * are not decompressed (`accept-encoding: identity` is sent). The request body is buffered.
 *
 * Node only. Throws {@link SignatureError} `fetch_refused` (policy) or `fetch_failed` (network, timeout); an
 * aborted `signal` rejects with its reason.
 *
 * @example
 * const fetch = createPinnedFetch({ timeoutMs: 10_000 })
 * await getAgentCapabilities('https://seller.example/mcp', { fetch })
 * createWebhookSender({ outbox, key, fetch })
 */
export function createPinnedFetch(options: PinnedFetchOptions = {}): typeof fetch {
  const timeoutMs = options.timeoutMs ?? 10_000
  return async (input, init) => {
    const deadline = Date.now() + timeoutMs
    const raw = input instanceof Request ? input.url : String(input)
    const target = await pinTarget(raw, options, deadline)
    const request = new Request(input, init)
    request.signal.throwIfAborted()
    const body =
      request.body === null || request.method === 'GET' || request.method === 'HEAD'
        ? undefined
        : new Uint8Array(await request.arrayBuffer())
    const headers: Record<string, string> = {}
    request.headers.forEach((value, name) => (headers[name] = value))
    headers['user-agent'] ??= options.userAgent ?? 'adwire'
    headers['accept-encoding'] = 'identity'
    headers.host = target.url.host
    if (body) headers['content-length'] = String(body.byteLength)
    return exchange(target, request, body, headers, {
      deadline,
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
      maxBytes: options.maxBytes ?? Number.POSITIVE_INFINITY,
      tls: options.tls,
    })
  }
}

interface ExchangeOptions {
  readonly deadline: number
  readonly connectTimeoutMs: number
  readonly maxBytes: number
  readonly tls: PinnedFetchOptions['tls']
}

function exchange(
  target: PinnedTarget,
  request: Request,
  body: Uint8Array | undefined,
  headers: Record<string, string>,
  options: ExchangeOptions,
): Promise<Response> {
  const { url, pinned } = target
  const where = `${url.origin}${url.pathname}`
  return new Promise((resolve, reject) => {
    const timers: ReturnType<typeof setTimeout>[] = []
    let settled = false
    // Before the response: reject the promise. After: error the body stream.
    let failBody: ((error: unknown) => void) | undefined
    const cleanup = () => {
      for (const timer of timers) clearTimeout(timer)
      request.signal.removeEventListener('abort', onAbort)
    }
    const fail = (error: unknown) => {
      outgoing.destroy()
      if (!settled) {
        settled = true
        cleanup()
        reject(error)
      } else if (failBody) {
        cleanup()
        failBody(error)
        failBody = undefined
      }
    }
    const onAbort = () => fail(request.signal.reason)
    const module = url.protocol === 'https:' ? https : http
    const outgoing = module.request({
      host: pinned.address,
      family: pinned.family,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: request.method,
      headers,
      agent: false,
      ...(url.protocol === 'https:' ? { servername: target.servername, ...options.tls } : {}),
    })
    request.signal.addEventListener('abort', onAbort)
    timers.push(
      setTimeout(
        () => fail(new SignatureError('fetch_failed', `fetch of ${where} timed out`)),
        Math.max(0, options.deadline - Date.now()),
      ),
    )
    outgoing.on('socket', (socket) => {
      if (!socket.connecting) return
      const timer = setTimeout(
        () => fail(new SignatureError('fetch_failed', `connecting to ${where} timed out`)),
        options.connectTimeoutMs,
      )
      timers.push(timer)
      socket.once('connect', () => clearTimeout(timer))
    })
    outgoing.on('error', (error) =>
      fail(new SignatureError('fetch_failed', `fetch of ${where} failed`, undefined, { cause: error })),
    )
    outgoing.on('response', (incoming) => {
      const status = incoming.statusCode ?? 0
      const responseHeaders = new Headers()
      for (let index = 0; index + 1 < incoming.rawHeaders.length; index += 2)
        responseHeaders.append(incoming.rawHeaders[index]!, incoming.rawHeaders[index + 1]!)
      const redirect = status >= 300 && status < 400
      if (redirect && request.redirect !== 'manual') {
        incoming.resume()
        fail(
          new SignatureError(
            'fetch_refused',
            `fetch of ${where} answered a redirect (${status}); redirects are refused`,
          ),
        )
        return
      }
      const declared = Number(incoming.headers['content-length'])
      if (Number.isFinite(declared) && declared > options.maxBytes) {
        fail(new SignatureError('fetch_refused', `response of ${where} exceeds ${options.maxBytes} bytes`))
        return
      }
      const empty = redirect || NULL_BODY.has(status) || request.method === 'HEAD'
      let stream: ReadableStream<Uint8Array> | null = null
      if (empty) {
        incoming.resume()
        incoming.once('end', cleanup)
      } else {
        stream = bodyStream(
          incoming,
          where,
          options.maxBytes,
          fail,
          cleanup,
          (handler) => (failBody = handler),
        )
      }
      settled = true
      const response = new Response(stream, {
        status,
        statusText: incoming.statusMessage ?? '',
        headers: responseHeaders,
      })
      Object.defineProperty(response, 'url', { value: url.href })
      resolve(response)
    })
    outgoing.end(body)
  })
}

/** The response body as a web stream, with back-pressure, the size cap and errors as SignatureError. */
function bodyStream(
  incoming: http.IncomingMessage,
  where: string,
  maxBytes: number,
  fail: (error: unknown) => void,
  done: () => void,
  onFail: (handler: (error: unknown) => void) => void,
): ReadableStream<Uint8Array> {
  let size = 0
  let finished = false
  return new ReadableStream<Uint8Array>({
    start(controller) {
      onFail((error) => {
        if (finished) return
        finished = true
        controller.error(error)
      })
      incoming.on('data', (chunk: Buffer) => {
        if (finished) return
        size += chunk.length
        if (size > maxBytes) {
          fail(new SignatureError('fetch_refused', `response of ${where} exceeds ${maxBytes} bytes`))
          return
        }
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))
        if ((controller.desiredSize ?? 1) <= 0) incoming.pause()
      })
      incoming.on('end', () => {
        done()
        if (finished) return
        finished = true
        controller.close()
      })
      incoming.on('error', (error) =>
        fail(new SignatureError('fetch_failed', `reading ${where} failed`, undefined, { cause: error })),
      )
      incoming.on('close', () => {
        if (!incoming.complete) fail(new SignatureError('fetch_failed', `reading ${where} was cut short`))
      })
    },
    pull() {
      incoming.resume()
    },
    cancel() {
      finished = true
      done()
      incoming.destroy()
    },
  })
}
