import type https from 'node:https'
import { SignatureError } from '../errors.js'
import type { AddressPolicy } from './address-policy.js'
import type { FetchedResource, SafeFetch, SafeFetchInit } from './fetch-types.js'
import { createPinnedFetch } from './pinned-fetch.js'
import type { LookupAddress } from './pinned-target.js'

export type { LookupAddress } from './pinned-target.js'

/** Options of {@link createSafeFetch}. */
export interface SafeFetchOptions extends AddressPolicy {
  /** Allow `http:` URLs (tests, local development). Default `false`: https only. */
  readonly allowHttp?: boolean
  /** Resolves a host name to every address it has. Default: `node:dns` `lookup` with `{ all: true }`. */
  readonly lookup?: (hostname: string) => Promise<readonly LookupAddress[]>
  /** Time to establish the TCP connection, in milliseconds. Default 5000. */
  readonly connectTimeoutMs?: number
  /** Time for the whole fetch (DNS, connect, TLS, headers, body), in milliseconds. Default 10000. */
  readonly timeoutMs?: number
  /** Size cap when the call gives none, in bytes. Default 65536 (AdCP `MAX_JWKS_BYTES`). */
  readonly maxBytes?: number
  /** Extra TLS options for https (a test CA, for instance). */
  readonly tls?: Pick<https.RequestOptions, 'ca' | 'rejectUnauthorized'>
  /** Sent as `user-agent`. Default `adwire-http-signatures`. */
  readonly userAgent?: string
}

/**
 * Creates an SSRF-safe GET for key discovery (AdCP 3.1 security.mdx "SSRF-safe fetches"; adcp-notes §2.7):
 * https only; userinfo refused; every address the host resolves to must pass {@link checkAddress} (one bad
 * answer refuses the fetch) and the connection goes to the first validated address, so a DNS rebind between
 * check and connect cannot move it; TLS still verifies the certificate against the host name (SNI). No
 * redirects: a 3xx is refused unless the call asks for `redirect: 'manual'`. The body is capped (checked
 * against `content-length` first, then while streaming) and the whole exchange is time-boxed. Responses are
 * never decompressed (`accept-encoding: identity`). Error messages never quote the response body.
 *
 * A GET profile of {@link createPinnedFetch}: the same resolution, pinning and transport, with the body read
 * whole. Node only (`node:http`, `node:https`, `node:dns`); the resolvers depend on the {@link SafeFetch} type
 * alone.
 *
 * @example
 * const fetch = createSafeFetch({ timeoutMs: 5_000 })
 * const response = await fetch('https://seller.example/.well-known/jwks.json', { maxBytes: 65_536 })
 * if (response.status === 200) console.log(new TextDecoder().decode(response.body))
 */
export function createSafeFetch(options: SafeFetchOptions = {}): SafeFetch {
  // The size cap is applied here, per call; the pinned fetch streams without one.
  const { maxBytes: _defaultCap, ...pinning } = options
  const pinnedFetch = createPinnedFetch({
    ...pinning,
    userAgent: options.userAgent ?? 'adwire-http-signatures',
  })
  return async (input: string, init: SafeFetchInit = {}): Promise<FetchedResource> => {
    const maxBytes = init.maxBytes ?? options.maxBytes ?? 65_536
    const response = await pinnedFetch(input, {
      headers: { accept: 'application/json', ...init.headers },
      redirect: 'manual',
    })
    const where = response.url.replace(/[?#].*$/, '')
    const { status, headers } = response
    if (status >= 300 && status < 400) {
      if ((init.redirect ?? 'error') === 'error') {
        throw new SignatureError(
          'fetch_refused',
          `fetch of ${where} answered a redirect (${status}); redirects are refused`,
        )
      }
      return { url: response.url, status, headers, body: new Uint8Array(0) }
    }
    const declared = Number(headers.get('content-length') ?? Number.NaN)
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body?.cancel()
      throw new SignatureError('fetch_refused', `response of ${where} exceeds ${maxBytes} bytes`)
    }
    return { url: response.url, status, headers, body: await readCapped(response, where, maxBytes) }
  }
}

/** Reads the whole body, refusing it past `maxBytes` (the transfer is cut, the body never quoted). */
async function readCapped(response: Response, where: string, maxBytes: number): Promise<Uint8Array> {
  if (!response.body) return new Uint8Array(0)
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    let next: Awaited<ReturnType<typeof reader.read>>
    try {
      next = await reader.read()
    } catch (error) {
      if (SignatureError.is(error)) throw error
      throw new SignatureError('fetch_failed', `reading ${where} failed`, undefined, { cause: error })
    }
    if (next.done) break
    size += next.value.byteLength
    if (size > maxBytes) {
      await reader.cancel()
      throw new SignatureError('fetch_refused', `response of ${where} exceeds ${maxBytes} bytes`)
    }
    chunks.push(next.value)
  }
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    body.set(chunk, offset)
    offset += chunk.byteLength
  }
  return body
}
