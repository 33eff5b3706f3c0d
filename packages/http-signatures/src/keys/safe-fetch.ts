import { lookup as dnsLookup } from 'node:dns/promises'
import http from 'node:http'
import https from 'node:https'
import { isIP } from 'node:net'
import { SignatureError } from '../errors.js'
import { checkAddress, type AddressPolicy, type PinnedAddress } from './address-policy.js'
import type { FetchedResource, SafeFetch, SafeFetchInit } from './fetch-types.js'

/** One answer of a DNS lookup, as `node:dns` gives it with `{ all: true }`. */
export interface LookupAddress {
  readonly address: string
  readonly family: number
}

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

const defaultLookup = (hostname: string) => dnsLookup(hostname, { all: true, verbatim: true })

/**
 * Creates an SSRF-safe GET for key discovery (AdCP 3.1 security.mdx "SSRF-safe fetches"; adcp-notes §2.7):
 * https only; userinfo refused; every address the host resolves to must pass {@link checkAddress} (one bad
 * answer refuses the fetch) and the connection goes to the first validated address, so a DNS rebind between
 * check and connect cannot move it; TLS still verifies the certificate against the host name (SNI). No
 * redirects: a 3xx is refused unless the call asks for `redirect: 'manual'`. The body is capped (checked
 * against `content-length` first, then while streaming) and the whole exchange is time-boxed. Responses are
 * never decompressed (`accept-encoding: identity`). Error messages never quote the response body.
 *
 * Node only (`node:http`, `node:https`, `node:dns`); the resolvers depend on the {@link SafeFetch} type alone.
 *
 * @example
 * const fetch = createSafeFetch({ timeoutMs: 5_000 })
 * const response = await fetch('https://seller.example/.well-known/jwks.json', { maxBytes: 65_536 })
 * if (response.status === 200) console.log(new TextDecoder().decode(response.body))
 */
export function createSafeFetch(options: SafeFetchOptions = {}): SafeFetch {
  const lookup = options.lookup ?? defaultLookup
  const timeoutMs = options.timeoutMs ?? 10_000
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000
  return async (input: string, init: SafeFetchInit = {}): Promise<FetchedResource> => {
    const url = parseTarget(input, options.allowHttp === true)
    const deadline = Date.now() + timeoutMs
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
    let pinned: PinnedAddress
    if (isIP(host) !== 0) {
      pinned = checkAddress(host, options)
    } else {
      const answers = await withDeadline(lookup(host), deadline, `DNS lookup of ${host}`)
      if (answers.length === 0) throw new SignatureError('fetch_failed', `${host} has no address`)
      const checked = answers.map((answer) => checkAddress(answer.address, options))
      pinned = checked[0]!
    }
    return transfer(url, pinned, {
      deadline,
      connectTimeoutMs,
      maxBytes: init.maxBytes ?? options.maxBytes ?? 65_536,
      headers: {
        accept: 'application/json',
        'accept-encoding': 'identity',
        'user-agent': options.userAgent ?? 'adwire-http-signatures',
        ...init.headers,
        host: url.host,
      },
      redirect: init.redirect ?? 'error',
      servername: isIP(host) === 0 ? host : undefined,
      tls: options.tls,
    })
  }
}

function parseTarget(input: string, allowHttp: boolean): URL {
  let url: URL
  try {
    url = new URL(input)
  } catch {
    throw new SignatureError('fetch_refused', 'not an absolute URL')
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) {
    throw new SignatureError('fetch_refused', `scheme ${url.protocol} refused: https only`)
  }
  if (url.username !== '' || url.password !== '') {
    throw new SignatureError('fetch_refused', 'URLs with userinfo are refused')
  }
  return url
}

async function withDeadline<T>(promise: Promise<T>, deadline: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new SignatureError('fetch_failed', `${what} timed out`)),
      Math.max(0, deadline - Date.now()),
    )
  })
  try {
    return await Promise.race([promise, expired])
  } catch (error) {
    if (SignatureError.is(error)) throw error
    throw new SignatureError('fetch_failed', `${what} failed`, undefined, { cause: error })
  } finally {
    clearTimeout(timer)
  }
}

interface TransferOptions {
  readonly deadline: number
  readonly connectTimeoutMs: number
  readonly maxBytes: number
  readonly headers: Record<string, string>
  readonly redirect: 'error' | 'manual'
  readonly servername: string | undefined
  readonly tls: SafeFetchOptions['tls']
}

function transfer(url: URL, pinned: PinnedAddress, options: TransferOptions): Promise<FetchedResource> {
  const where = `${url.origin}${url.pathname}`
  return new Promise((resolve, reject) => {
    let settled = false
    const timers: ReturnType<typeof setTimeout>[] = []
    const finish = (error: SignatureError | undefined, value?: FetchedResource) => {
      if (settled) return
      settled = true
      for (const timer of timers) clearTimeout(timer)
      if (error) {
        request.destroy()
        reject(error)
      } else resolve(value!)
    }
    const module = url.protocol === 'https:' ? https : http
    const request = module.request({
      host: pinned.address,
      family: pinned.family,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers: options.headers,
      agent: false,
      ...(url.protocol === 'https:' ? { servername: options.servername, ...options.tls } : {}),
    })
    timers.push(
      setTimeout(
        () => finish(new SignatureError('fetch_failed', `fetch of ${where} timed out`)),
        Math.max(0, options.deadline - Date.now()),
      ),
    )
    request.on('socket', (socket) => {
      if (!socket.connecting) return
      const timer = setTimeout(
        () => finish(new SignatureError('fetch_failed', `connecting to ${where} timed out`)),
        options.connectTimeoutMs,
      )
      timers.push(timer)
      socket.once('connect', () => clearTimeout(timer))
    })
    request.on('error', (error) =>
      finish(new SignatureError('fetch_failed', `fetch of ${where} failed`, undefined, { cause: error })),
    )
    request.on('response', (response) => {
      const status = response.statusCode ?? 0
      const headers = new Headers()
      for (const [name, value] of Object.entries(response.headers)) {
        for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value])
          headers.append(name, item)
      }
      if (status >= 300 && status < 400) {
        response.resume()
        if (options.redirect === 'error') {
          finish(
            new SignatureError(
              'fetch_refused',
              `fetch of ${where} answered a redirect (${status}); redirects are refused`,
            ),
          )
        } else finish(undefined, { url: url.href, status, headers, body: new Uint8Array(0) })
        return
      }
      const declared = Number(response.headers['content-length'])
      if (Number.isFinite(declared) && declared > options.maxBytes) {
        finish(new SignatureError('fetch_refused', `response of ${where} exceeds ${options.maxBytes} bytes`))
        return
      }
      const chunks: Buffer[] = []
      let size = 0
      response.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > options.maxBytes) {
          finish(
            new SignatureError('fetch_refused', `response of ${where} exceeds ${options.maxBytes} bytes`),
          )
        } else chunks.push(chunk)
      })
      response.on('error', (error) =>
        finish(new SignatureError('fetch_failed', `reading ${where} failed`, undefined, { cause: error })),
      )
      response.on('close', () => {
        if (!response.complete) finish(new SignatureError('fetch_failed', `reading ${where} was cut short`))
      })
      response.on('end', () => {
        const body = new Uint8Array(Buffer.concat(chunks, size))
        finish(undefined, { url: url.href, status, headers, body })
      })
    })
    request.end()
  })
}
