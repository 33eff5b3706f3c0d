import { redactUrl } from '@adwire/webhooks'
import { RabbitSinkError } from './errors.js'

/** How {@link createRabbitSink} reaches RabbitMQ and where it publishes: one queue, or an exchange. */
export interface RabbitSinkOptions {
  /**
   * The broker: `amqp://[user:password@]host:5672[/vhost]`, or `amqps://` for TLS. amqplib's own URL
   * parameters (`heartbeat`, `frameMax`, `channelMax`, `locale`) are passed on; the sink's are options here.
   */
  readonly url: string
  /**
   * The queue to publish into (through the default exchange). Declared durable when absent (a quorum queue
   * unless `quorum: false`); an existing queue is used as it is. Give `queue` or `exchange`, not both.
   */
  readonly queue?: string
  /** An existing exchange to publish to, with `routingKey`. It must exist; the sink does not declare it. */
  readonly exchange?: string
  /** The routing key with `exchange`. Default: the empty key (what a fanout exchange ignores anyway). */
  readonly routingKey?: string
  /** Declare the queue as a quorum queue (`x-queue-type: quorum`, replicated). Default true; false: classic. */
  readonly quorum?: boolean
  /**
   * How long a message may wait for the broker's confirm, in milliseconds, before its outcome is a refusal
   * (the relay then publishes it again under the same message id). Default 10,000.
   */
  readonly confirmTimeoutMs?: number
  /** How long opening the connection may take, in milliseconds. Default 5000. */
  readonly connectTimeoutMs?: number
}

/** The options with defaults applied: where each message goes, and the target shown in logs. */
export interface ResolvedRabbitSinkOptions {
  /** The broker URL, credentials included (for the client only). */
  readonly url: string
  /** `''` (the default exchange) in queue mode. */
  readonly exchange: string
  /** The queue's name in queue mode. */
  readonly routingKey: string
  /** The queue to ensure, with its type; undefined in exchange mode. */
  readonly queue: { readonly name: string; readonly type: 'quorum' | 'classic' } | undefined
  readonly confirmTimeoutMs: number
  readonly connectTimeoutMs: number
  /** Where it publishes, credentials removed. */
  readonly target: string
}

/** The parameters amqplib reads from a broker URL; the sink passes them on. */
const AMQPLIB_PARAMETERS = ['heartbeat', 'frameMax', 'channelMax', 'locale']
/** The parameters of a sink URL. */
const SINK_PARAMETERS = ['queue', 'exchange', 'routing_key', 'queue_type']

const invalid = (message: string): RabbitSinkError => new RabbitSinkError('sink_invalid_options', message)

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw invalid(`${name} must be a positive integer, got ${String(value)}`)
  }
  return value
}

/** An AMQP short string: a queue, exchange or routing key of at most 255 bytes. */
function shortString(name: string, value: unknown, allowEmpty: boolean): string {
  if (typeof value !== 'string' || (!allowEmpty && value.length === 0)) {
    throw invalid(`${name} must be a non-empty string`)
  }
  if (Buffer.byteLength(value) > 255) throw invalid(`${name} is longer than 255 bytes`)
  return value
}

function parseBrokerUrl(url: string, what: string, allowed: readonly string[]): URL {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch (cause) {
    throw new RabbitSinkError('sink_invalid_options', `not a ${what}: ${redactUrl(url)}`, { cause })
  }
  if (parsed.protocol !== 'amqp:' && parsed.protocol !== 'amqps:') {
    throw invalid(`a ${what} starts with amqp:// or amqps://, got ${parsed.protocol}//`)
  }
  if (!parsed.hostname) throw invalid(`a ${what} needs a host: ${redactUrl(url)}`)
  for (const key of parsed.searchParams.keys()) {
    if (!allowed.includes(key)) {
      throw invalid(`unknown ${what} parameter '${key}' (known: ${allowed.join(', ')})`)
    }
  }
  parsed.hash = ''
  return parsed
}

/** Validates the options and applies the defaults. */
export function resolveRabbitSinkOptions(options: RabbitSinkOptions): ResolvedRabbitSinkOptions {
  const parsed = parseBrokerUrl(options.url, 'RabbitMQ URL', AMQPLIB_PARAMETERS)
  const url = parsed.toString()
  const confirmTimeoutMs = positiveInteger('confirmTimeoutMs', options.confirmTimeoutMs, 10_000)
  const connectTimeoutMs = positiveInteger('connectTimeoutMs', options.connectTimeoutMs, 5000)
  const target = new URL(redactUrl(url))
  if (options.queue !== undefined && options.exchange !== undefined) {
    throw invalid('give queue or exchange, not both')
  }
  if (options.exchange !== undefined) {
    const exchange = shortString('exchange', options.exchange, false)
    const routingKey = shortString('routingKey', options.routingKey ?? '', true)
    if (options.quorum !== undefined)
      throw invalid('quorum applies to a queue the sink declares, not to an exchange')
    target.searchParams.set('exchange', exchange)
    target.searchParams.set('routing_key', routingKey)
    const common = { url, confirmTimeoutMs, connectTimeoutMs, target: target.toString() }
    return { ...common, exchange, routingKey, queue: undefined }
  }
  if (options.queue === undefined)
    throw invalid('name the queue (queue) or the exchange (exchange) to publish to')
  const queue = shortString('queue', options.queue, false)
  if (options.routingKey !== undefined) throw invalid('routingKey goes with exchange; a queue is its own key')
  if (options.quorum !== undefined && typeof options.quorum !== 'boolean')
    throw invalid('quorum is true or false')
  const type = options.quorum === false ? 'classic' : 'quorum'
  target.searchParams.set('queue', queue)
  target.searchParams.set('queue_type', type)
  const common = { url, confirmTimeoutMs, connectTimeoutMs, target: target.toString() }
  return { ...common, exchange: '', routingKey: queue, queue: { name: queue, type } }
}

/**
 * The options of a sink URL: `amqp://[user:password@]host:5672[/vhost]?queue=Q` (with `&queue_type=classic`
 * for a classic queue; quorum by default), or `?exchange=E&routing_key=K`. amqplib's `heartbeat`,
 * `frameMax`, `channelMax` and `locale` stay in the broker URL.
 *
 * @example
 * rabbitSinkOptionsFromUrl('amqp://guest:guest@127.0.0.1:5672/?queue=adcp.webhooks')
 * // { url: 'amqp://guest:guest@127.0.0.1:5672/', queue: 'adcp.webhooks' }
 */
export function rabbitSinkOptionsFromUrl(url: string): RabbitSinkOptions {
  const parsed = parseBrokerUrl(url, 'RabbitMQ sink URL', [...SINK_PARAMETERS, ...AMQPLIB_PARAMETERS])
  const get = (name: string): string | undefined => parsed.searchParams.get(name) ?? undefined
  const queue = get('queue')
  const exchange = get('exchange')
  const routingKey = get('routing_key')
  const queueType = get('queue_type')
  for (const name of SINK_PARAMETERS) parsed.searchParams.delete(name)
  const broker = parsed.toString()
  if (queue === undefined && exchange === undefined) {
    throw invalid(`a RabbitMQ sink URL names its queue or exchange: ${redactUrl(url)} (add ?queue=…)`)
  }
  if (queueType !== undefined && queueType !== 'quorum' && queueType !== 'classic') {
    throw invalid(`queue_type is quorum or classic, got '${queueType}'`)
  }
  if (exchange !== undefined && queueType !== undefined) {
    throw invalid('queue_type applies to a queue the sink declares, not to an exchange')
  }
  return {
    url: broker,
    ...(queue === undefined ? {} : { queue }),
    ...(exchange === undefined ? {} : { exchange }),
    ...(routingKey === undefined ? {} : { routingKey }),
    ...(queueType === undefined ? {} : { quorum: queueType === 'quorum' }),
  }
}
