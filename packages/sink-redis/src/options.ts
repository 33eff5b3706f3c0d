import { redactUrl } from '@adwire/webhooks'
import { RedisSinkError } from './errors.js'

/** How {@link createRedisSink} reaches Redis and which stream it appends to. */
export interface RedisSinkOptions {
  /**
   * The server: `redis://[user:password@]host:6379[/db]`, or `rediss://` for TLS. Credentials in the URL are
   * used; a query string is not (give the stream and limits as options, or use {@link redisSinkFromUrl}).
   */
  readonly url: string
  /** The stream the events are appended to (`XADD`), for example `adcp:webhooks`. */
  readonly stream: string
  /**
   * Trim the stream to about this many entries on each append (`MAXLEN ~ n`: Redis trims whole nodes, so the
   * stream may hold somewhat more). A consumer more than this many entries behind loses the oldest. Default:
   * no trimming.
   */
  readonly maxLen?: number
  /**
   * How long an event id is remembered, in seconds: a repeat within it appends nothing. Default 86,400 (24 h,
   * the receiver's own dedup window and the relay's retry horizon); see the README.
   */
  readonly dedupeSeconds?: number
  /** How long opening the connection may take, in milliseconds. Default 5000. */
  readonly connectTimeoutMs?: number
}

/** The options with defaults applied and the URL split from the target shown in logs. */
export interface ResolvedRedisSinkOptions {
  /** The server URL without a query string, credentials included (for the client only). */
  readonly url: string
  readonly stream: string
  /** 0: no trimming. */
  readonly maxLen: number
  readonly dedupeSeconds: number
  readonly connectTimeoutMs: number
  /** Where it publishes, credentials removed. */
  readonly target: string
}

/** The default dedupe window: 24 hours, the receiver's dedup window and the relay's retry horizon. */
export const DEFAULT_DEDUPE_SECONDS = 86_400

const invalid = (message: string): RedisSinkError => new RedisSinkError('sink_invalid_options', message)

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw invalid(`${name} must be a positive integer, got ${String(value)}`)
  }
  return value
}

function parseServerUrl(url: string, what: string): URL {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch (cause) {
    throw new RedisSinkError('sink_invalid_options', `not a ${what}: ${redactUrl(url)}`, { cause })
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw invalid(`a ${what} starts with redis:// or rediss://, got ${parsed.protocol}//`)
  }
  if (!parsed.hostname) throw invalid(`a ${what} needs a host: ${redactUrl(url)}`)
  if (!/^\/?(?:\d+)?$/u.test(parsed.pathname)) {
    throw invalid(`the path of a ${what} is a database number (/0), got '${parsed.pathname}'`)
  }
  return parsed
}

/** Validates the options and applies the defaults. */
export function resolveRedisSinkOptions(options: RedisSinkOptions): ResolvedRedisSinkOptions {
  const parsed = parseServerUrl(options.url, 'Redis URL')
  parsed.search = ''
  parsed.hash = ''
  if (typeof options.stream !== 'string' || options.stream.length === 0) {
    throw invalid('stream must name the Redis stream (a non-empty key)')
  }
  const maxLen = options.maxLen === undefined ? 0 : positiveInteger('maxLen', options.maxLen, 0)
  const dedupeSeconds = positiveInteger('dedupeSeconds', options.dedupeSeconds, DEFAULT_DEDUPE_SECONDS)
  const connectTimeoutMs = positiveInteger('connectTimeoutMs', options.connectTimeoutMs, 5000)
  const url = parsed.toString()
  const query = `stream=${encodeURIComponent(options.stream)}${maxLen > 0 ? `&maxlen=${maxLen}` : ''}`
  return {
    url,
    stream: options.stream,
    maxLen,
    dedupeSeconds,
    connectTimeoutMs,
    target: `${redactUrl(url)}?${query}`,
  }
}

/**
 * The options of a sink URL: `redis://[user:password@]host:6379[/db]?stream=S` with, optionally, `maxlen`
 * (entries, approximate trimming) and `dedupe_seconds`.
 *
 * @example
 * redisSinkOptionsFromUrl('redis://127.0.0.1:6379/0?stream=adcp:webhooks&maxlen=1000000&dedupe_seconds=86400')
 * // { url: 'redis://127.0.0.1:6379/0', stream: 'adcp:webhooks', maxLen: 1000000, dedupeSeconds: 86400 }
 */
export function redisSinkOptionsFromUrl(url: string): RedisSinkOptions {
  const parsed = parseServerUrl(url, 'Redis sink URL')
  const known = new Set(['stream', 'maxlen', 'dedupe_seconds'])
  for (const key of parsed.searchParams.keys()) {
    if (!known.has(key)) {
      throw invalid(`unknown Redis sink URL parameter '${key}' (known: ${[...known].join(', ')})`)
    }
  }
  const stream = parsed.searchParams.get('stream')
  if (!stream) throw invalid(`a Redis sink URL names its stream: ${redactUrl(url)} (add ?stream=…)`)
  const integer = (name: string): number | undefined => {
    const value = parsed.searchParams.get(name)
    if (value === null) return undefined
    if (!/^\d+$/u.test(value)) throw invalid(`${name} must be a positive integer, got '${value}'`)
    return Number(value)
  }
  const maxLen = integer('maxlen')
  const dedupeSeconds = integer('dedupe_seconds')
  parsed.search = ''
  parsed.hash = ''
  return {
    url: parsed.toString(),
    stream,
    ...(maxLen === undefined ? {} : { maxLen }),
    ...(dedupeSeconds === undefined ? {} : { dedupeSeconds }),
  }
}
