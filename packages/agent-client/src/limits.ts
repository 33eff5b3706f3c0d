/** The bounds of every exchange with an agent: a deadline, a response size cap, and extra headers. */
import { AgentClientError } from './errors.js'

/**
 * Runs `work` with a deadline (and the caller's signal): a hung agent never hangs the caller. The work gets a
 * signal that aborts at the deadline.
 *
 * @throws {AgentClientError} `SERVICE_UNAVAILABLE` "… timed out after N ms", or when `signal` aborts.
 * @example const tools = await withTimeout(5_000, 'listing tools', (signal) => client.listTools(undefined, { signal }))
 */
export async function withTimeout<T>(
  ms: number,
  what: string,
  work: (signal: AbortSignal) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  let onAbort: (() => void) | undefined
  const deadline = new Promise<never>((_resolve, reject) => {
    const stop = (message: string) => {
      controller.abort()
      reject(new AgentClientError('SERVICE_UNAVAILABLE', message))
    }
    timer = setTimeout(() => stop(`${what} timed out after ${ms} ms`), ms)
    onAbort = () => stop(`${what} was aborted`)
    if (signal?.aborted) onAbort()
    else signal?.addEventListener('abort', onAbort, { once: true })
  })
  try {
    return await Promise.race([work(controller.signal), deadline])
  } finally {
    clearTimeout(timer)
    if (onAbort) signal?.removeEventListener('abort', onAbort)
  }
}

/**
 * The response with its body capped at `limit` bytes: a declared larger `content-length` throws at once, a
 * longer stream errors when it passes the limit.
 *
 * @throws {AgentClientError} `SERVICE_UNAVAILABLE` "response … exceeds the N-byte limit".
 * @example const bounded = capResponseSize(await fetch(url), 4 * 1024 * 1024)
 */
export function capResponseSize(response: Response, limit: number): Response {
  const declared = Number(response.headers.get('content-length') ?? '0')
  if (declared > limit) {
    throw new AgentClientError(
      'SERVICE_UNAVAILABLE',
      `response of ${declared} bytes exceeds the ${limit}-byte limit`,
    )
  }
  if (!response.body) return response
  let seen = 0
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength
        if (seen > limit) {
          controller.error(
            new AgentClientError('SERVICE_UNAVAILABLE', `response exceeds the ${limit}-byte limit`),
          )
          return
        }
        controller.enqueue(chunk)
      },
    }),
  )
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  })
}

/** Options of {@link boundedFetch}. */
export interface BoundedFetchOptions {
  /** Largest response body, bytes. Default: no cap. */
  readonly maxResponseBytes?: number | undefined
  /** Headers set on every request (such as `authorization`). */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/**
 * `fetchImpl` with `headers` set on every request and every response body capped.
 *
 * @example const agentFetch = boundedFetch(pinnedFetch, { maxResponseBytes: 1 << 22, headers: { authorization: 'Bearer t' } })
 */
export function boundedFetch(fetchImpl: typeof fetch, options: BoundedFetchOptions): typeof fetch {
  const { maxResponseBytes, headers } = options
  if (maxResponseBytes === undefined && !headers) return fetchImpl
  return async (input, init) => {
    let request: Parameters<typeof fetch> = [input, init]
    if (headers) {
      const merged = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined))
      for (const [name, value] of Object.entries(headers)) merged.set(name, value)
      request = [input, { ...init, headers: merged }]
    }
    const response = await fetchImpl(...request)
    return maxResponseBytes === undefined ? response : capResponseSize(response, maxResponseBytes)
  }
}
