/**
 * SINK_URL to a {@link Sink}: `http(s)://` is the HTTP sink of @adwire/webhooks (today's DOWNSTREAM_URL); the
 * brokers' sinks are packages of their own, loaded only when their scheme is configured, so a receiver that
 * forwards over HTTP carries no broker client.
 */
import { EnvError } from '@adwire/service-env'
import { httpSink, type Sink } from '@adwire/webhooks'

interface BrokerSink {
  readonly specifier: string
  readonly factory: string
}

const RABBITMQ: BrokerSink = { specifier: '@adwire/sink-rabbitmq', factory: 'rabbitSinkFromUrl' }
const REDIS: BrokerSink = { specifier: '@adwire/sink-redis', factory: 'redisSinkFromUrl' }
const NATS: BrokerSink = { specifier: '@adwire/sink-nats', factory: 'natsSinkFromUrl' }

const BROKERS: Readonly<Record<string, BrokerSink>> = {
  amqp: RABBITMQ,
  amqps: RABBITMQ,
  redis: REDIS,
  rediss: REDIS,
  nats: NATS,
  tls: NATS,
}

/** The schemes SINK_URL accepts. */
export const SINK_SCHEMES: readonly string[] = [...Object.keys(BROKERS), 'http', 'https']

/**
 * The scheme of a sink URL (without the colon) when it is one SINK_URL accepts.
 *
 * @example
 * sinkScheme('nats://127.0.0.1:4222?stream=ADCP&subject=adcp.events') // 'nats'
 * sinkScheme('ftp://x') // undefined
 */
export function sinkScheme(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined
  const scheme = new URL(url).protocol.slice(0, -1)
  return SINK_SCHEMES.includes(scheme) ? scheme : undefined
}

export interface SinkFromUrlOptions {
  /** The HTTP sink's fetch (the receiver's pinned outbound fetch). */
  readonly fetch?: typeof globalThis.fetch
  /** The HTTP sink's per-request timeout, ms. */
  readonly timeoutMs?: number
  /** Loads a broker sink's package (tests). Default: a dynamic `import`. */
  readonly load?: (specifier: string) => Promise<unknown>
}

type SinkModule = Readonly<Record<string, ((url: string) => Sink) | undefined>>

/**
 * Opens the sink SINK_URL names; throws {@link EnvError} for a scheme it does not know or a broker whose
 * package is not installed (naming the package to add).
 *
 * @example
 * const sink = await sinkFromUrl('amqp://guest:guest@127.0.0.1:5672/?queue=adcp-events') // @adwire/sink-rabbitmq
 * const http = await sinkFromUrl('https://events.buyer.example/adcp', { fetch: outbound.forwardFetch })
 */
export async function sinkFromUrl(url: string, options: SinkFromUrlOptions = {}): Promise<Sink> {
  const scheme = sinkScheme(url)
  if (scheme === undefined) {
    throw new EnvError(`SINK_URL must be an absolute URL with one of the schemes ${SINK_SCHEMES.join(', ')}`)
  }
  if (scheme === 'http' || scheme === 'https') {
    return httpSink(url, {
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    })
  }
  const broker = BROKERS[scheme]!
  const load =
    options.load ?? ((specifier: string) => import(/* @vite-ignore */ specifier) as Promise<unknown>)
  let loaded: SinkModule
  try {
    loaded = (await load(broker.specifier)) as SinkModule
  } catch (cause) {
    throw new EnvError(
      `SINK_URL names a ${scheme}:// sink, which needs the package ${broker.specifier}; install it beside the receiver ` +
        `(${(cause as Error).message})`,
      { cause },
    )
  }
  const factory = loaded[broker.factory]
  if (typeof factory !== 'function') {
    throw new EnvError(`${broker.specifier} does not export ${broker.factory}: is it the right version?`)
  }
  return factory(url)
}
