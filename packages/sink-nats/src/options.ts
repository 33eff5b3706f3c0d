import { redactUrl } from '@adwire/webhooks'
import { NatsSinkError } from './errors.js'

/** How {@link createNatsSink} reaches NATS and which stream it publishes into. */
export interface NatsSinkOptions {
  /**
   * One server or a cluster's servers (`nats://host:4222`, `tls://host:4222`, or `host:4222`). Credentials in a
   * server URL are used: `nats://user:password@host` as user and password, `nats://token@host` as a token.
   */
  readonly servers: string | readonly string[]
  /** The JetStream stream that stores the events (created when absent unless `createStream` is false). */
  readonly stream: string
  /** The subject each event is published on; the stream must capture it. */
  readonly subject: string
  /**
   * The stream's duplicate window in seconds when this sink creates it (or updates it, when given and the
   * stream's differs). Default: JetStream's own, 120 s. It must cover the relay's retry horizon; see the README.
   */
  readonly duplicateWindowSeconds?: number
  /** Create the stream when absent (file storage, the subject, the duplicate window). Default `true`. */
  readonly createStream?: boolean
  /** Publishes awaiting their ack at once. Default 64. */
  readonly concurrency?: number
  /** How long one publish waits for its ack, in milliseconds. Default 5000. */
  readonly ackTimeoutMs?: number
  /** How long opening the connection may take, in milliseconds. Default 5000. */
  readonly connectTimeoutMs?: number
  /**
   * How often the client tries to reconnect after losing the server before it closes the connection (then the
   * next `publish` opens a new one). Default 10, two seconds apart (the NATS client's); `-1` never gives up.
   */
  readonly maxReconnectAttempts?: number
}

/** The options with defaults applied, credentials taken out of the server URLs. */
export interface ResolvedNatsSinkOptions {
  readonly servers: readonly string[]
  readonly user?: string
  readonly pass?: string
  readonly token?: string
  readonly stream: string
  readonly subject: string
  /** `undefined`: JetStream's default window, and an existing stream's is left as it is. */
  readonly duplicateWindowSeconds: number | undefined
  readonly createStream: boolean
  readonly concurrency: number
  readonly ackTimeoutMs: number
  readonly connectTimeoutMs: number
  readonly maxReconnectAttempts: number
  /** Where it publishes, credentials removed. */
  readonly target: string
}

const invalid = (message: string): NatsSinkError => new NatsSinkError('sink_invalid_options', message)

function positive(name: string, value: number | undefined, fallback: number, integer: boolean): number {
  if (value === undefined) return fallback
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw invalid(`${name} must be a positive ${integer ? 'integer' : 'number'}, got ${String(value)}`)
  }
  return value
}

function reconnectAttempts(value: number | undefined): number {
  if (value === undefined) return 10
  if (!Number.isInteger(value) || value < -1) {
    throw invalid(
      `maxReconnectAttempts must be an integer of -1 (never give up) or more, got ${String(value)}`,
    )
  }
  return value
}

/** Validates the options, applies the defaults and moves credentials out of the server URLs. */
export function resolveNatsSinkOptions(options: NatsSinkOptions): ResolvedNatsSinkOptions {
  const list = typeof options.servers === 'string' ? [options.servers] : [...options.servers]
  if (list.length === 0) throw invalid('servers must name at least one NATS server')
  let user: string | undefined
  let pass: string | undefined
  let token: string | undefined
  const servers = list.map((server) => {
    const withScheme = /^[a-z]+:\/\//iu.test(server) ? server : `nats://${server}`
    let url: URL
    try {
      url = new URL(withScheme)
    } catch (cause) {
      throw new NatsSinkError('sink_invalid_options', `not a NATS server URL: ${redactUrl(withScheme)}`, {
        cause,
      })
    }
    if (url.protocol !== 'nats:' && url.protocol !== 'tls:') {
      throw invalid(`a NATS server URL starts with nats:// or tls://, got ${url.protocol}//`)
    }
    if (!url.hostname) throw invalid(`a NATS server URL needs a host: ${redactUrl(withScheme)}`)
    if (url.username && url.password) {
      user = decodeURIComponent(url.username)
      pass = decodeURIComponent(url.password)
    } else if (url.username) {
      token = decodeURIComponent(url.username)
    }
    return `${url.protocol}//${url.host}`
  })
  if (!/^[^\s.*>/\\]+$/u.test(options.stream)) {
    throw invalid(
      `stream must be a JetStream stream name (no spaces, '.', '*', '>', '/' or '\\'), got '${options.stream}'`,
    )
  }
  if (!options.subject.split('.').every((token) => /^[^\s*>]+$/u.test(token))) {
    throw invalid(
      `subject must be a literal NATS subject (tokens separated by '.', no wildcards), got '${options.subject}'`,
    )
  }
  const duplicateWindowSeconds =
    options.duplicateWindowSeconds === undefined
      ? undefined
      : positive('duplicateWindowSeconds', options.duplicateWindowSeconds, 120, false)
  const redacted = list.map((server) =>
    redactUrl(/^[a-z]+:\/\//iu.test(server) ? server : `nats://${server}`),
  )
  const query = `stream=${encodeURIComponent(options.stream)}&subject=${encodeURIComponent(options.subject)}`
  return {
    servers,
    ...(user === undefined ? {} : { user }),
    ...(pass === undefined ? {} : { pass }),
    ...(token === undefined ? {} : { token }),
    stream: options.stream,
    subject: options.subject,
    duplicateWindowSeconds,
    createStream: options.createStream ?? true,
    concurrency: positive('concurrency', options.concurrency, 64, true),
    ackTimeoutMs: positive('ackTimeoutMs', options.ackTimeoutMs, 5000, true),
    connectTimeoutMs: positive('connectTimeoutMs', options.connectTimeoutMs, 5000, true),
    maxReconnectAttempts: reconnectAttempts(options.maxReconnectAttempts),
    target: `${redacted.map((server) => server.replace(/\/$/u, '')).join(',')}?${query}`,
  }
}

/**
 * The options of a sink URL: `nats://[user:password@]host:port?stream=S&subject=a.b` with, optionally,
 * `duplicate_window` (seconds) and `create_stream=false`.
 *
 * @example
 * natsSinkOptionsFromUrl('nats://127.0.0.1:4222?stream=ADCP_WEBHOOKS&subject=adcp.webhooks&duplicate_window=3600')
 * // { servers: 'nats://127.0.0.1:4222', stream: 'ADCP_WEBHOOKS', subject: 'adcp.webhooks', duplicateWindowSeconds: 3600 }
 */
export function natsSinkOptionsFromUrl(url: string): NatsSinkOptions {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch (cause) {
    throw new NatsSinkError('sink_invalid_options', `not a NATS sink URL: ${redactUrl(url)}`, { cause })
  }
  if (parsed.protocol !== 'nats:' && parsed.protocol !== 'tls:') {
    throw invalid(`a NATS sink URL starts with nats:// or tls://, got ${parsed.protocol}//`)
  }
  const known = new Set(['stream', 'subject', 'duplicate_window', 'create_stream'])
  for (const key of parsed.searchParams.keys()) {
    if (!known.has(key))
      throw invalid(`unknown NATS sink URL parameter '${key}' (known: ${[...known].join(', ')})`)
  }
  const stream = parsed.searchParams.get('stream')
  const subject = parsed.searchParams.get('subject')
  if (!stream || !subject) {
    throw invalid(`a NATS sink URL names its stream and subject: ${redactUrl(url)} (add ?stream=…&subject=…)`)
  }
  const window = parsed.searchParams.get('duplicate_window')
  const create = parsed.searchParams.get('create_stream')
  if (create !== null && create !== 'true' && create !== 'false') {
    throw invalid(`create_stream is true or false, got '${create}'`)
  }
  const auth = parsed.username ? `${parsed.username}${parsed.password ? `:${parsed.password}` : ''}@` : ''
  return {
    servers: `${parsed.protocol}//${auth}${parsed.host}`,
    stream,
    subject,
    ...(window === null ? {} : { duplicateWindowSeconds: Number(window) }),
    ...(create === null ? {} : { createStream: create === 'true' }),
  }
}
