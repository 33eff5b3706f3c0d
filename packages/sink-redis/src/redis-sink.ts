import { createClient } from 'redis'
import type { Sink, SinkMessage, SinkOutcome } from '@adwire/webhooks'
import { RedisSinkError } from './errors.js'
import {
  redisSinkOptionsFromUrl,
  resolveRedisSinkOptions,
  type RedisSinkOptions,
  type ResolvedRedisSinkOptions,
} from './options.js'
import { dedupeKey, IDEMPOTENT_XADD, IDEMPOTENT_XADD_SHA } from './script.js'

/** The client's name on the server (`CLIENT LIST`). */
export const CLIENT_NAME = 'adwire-sink-redis'

/** An error as one line. */
function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0])
  if (error instanceof Error) return error.message || ('code' in error ? String(error.code) : error.name)
  return String(error)
}

/** A client that reconnects (backing off up to 2 s) once `connected()`, and gives up before. */
function newClient(options: ResolvedRedisSinkOptions, connected: () => boolean) {
  return createClient({
    url: options.url,
    name: CLIENT_NAME,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: options.connectTimeoutMs,
      reconnectStrategy: (retries) =>
        connected() ? Math.min(2 ** retries * 50, 2000) + Math.floor(Math.random() * 100) : false,
    },
  })
}

type Client = ReturnType<typeof newClient>

/**
 * Opens a client. The first connection is tried once: a server that does not answer rejects at once with a
 * `sink_unavailable` error (the relay retries the batch later). Once connected, the client reconnects by
 * itself after a lost connection, backing off up to 2 s; commands are not queued while it is down.
 */
async function open(options: ResolvedRedisSinkOptions): Promise<Client> {
  let connected = false
  const client = newClient(options, () => connected)
  // The client emits every connection error; without a listener Node would throw them.
  client.on('error', () => undefined)
  try {
    await client.connect()
  } catch (error) {
    client.destroy()
    throw new RedisSinkError(
      'sink_unavailable',
      `cannot connect to Redis at ${options.target}: ${describe(error)}`,
      { cause: error },
    )
  }
  connected = true
  return client
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT')
}

/** Runs the idempotent XADD for one message (EVALSHA, EVAL when the server does not hold the script yet). */
async function append(
  client: Client,
  message: SinkMessage,
  options: ResolvedRedisSinkOptions,
): Promise<SinkOutcome> {
  const rest = [
    '2',
    options.stream,
    dedupeKey(options.stream, message.id),
    message.id,
    message.body,
    JSON.stringify(message.headers),
    String(options.dedupeSeconds),
    String(options.maxLen),
  ]
  try {
    try {
      // The entry id, or null for a duplicate: either way the stream holds the event.
      await client.sendCommand(['EVALSHA', IDEMPOTENT_XADD_SHA, ...rest])
    } catch (error) {
      if (!isNoScript(error)) throw error
      await client.sendCommand(['EVAL', IDEMPOTENT_XADD, ...rest])
    }
    return { ok: true }
  } catch (error) {
    return { ok: false, error: `Redis did not append the event: ${describe(error)}` }
  }
}

/**
 * A {@link Sink} into a Redis stream, exactly once per event id: each message runs one Lua script that appends
 * it (`XADD <stream> [MAXLEN ~ n] * id <id> body <body> headers <json>`) and records its id under
 * `<stream>:dedupe:<id>` for `dedupeSeconds`, or appends nothing when the id is recorded (a repeat, confirmed
 * all the same). The calls of one `publish` are pipelined. The connection opens on the first `publish`, the
 * client reconnects after losing it, and `publish` rejects with a `sink_unavailable` {@link RedisSinkError}
 * while there is no connection. Throws `sink_invalid_options` for bad options.
 *
 * @example
 * const sink = createRedisSink({ url: 'redis://127.0.0.1:6379/0', stream: 'adcp:webhooks', maxLen: 1_000_000 })
 * const outcomes = await sink.publish([{ id: 'q3v…', body: '{"sender":"…"}', headers: { 'adcp-task-type': 'media_buy' } }])
 * // [{ ok: true }]
 * await sink.close()
 */
export function createRedisSink(options: RedisSinkOptions): Sink {
  const resolved = resolveRedisSinkOptions(options)
  let current: Promise<Client> | undefined
  let closed = false
  let closing: Promise<void> | undefined

  const connection = async (): Promise<Client> => {
    if (current !== undefined) {
      const client = await current.catch(() => undefined)
      // Still open: connected, or reconnecting by itself. Closed (never opened, or given up): open anew.
      if (client?.isOpen) return client
      current = undefined
    }
    const opening = open(resolved)
    current = opening
    opening.catch(() => {
      if (current === opening) current = undefined
    })
    return opening
  }

  return {
    kind: 'redis',
    target: resolved.target,
    async publish(messages) {
      if (closed) throw new RedisSinkError('sink_closed', `the Redis sink for ${resolved.target} is closed`)
      if (messages.length === 0) return []
      const client = await connection()
      if (!client.isReady) {
        throw new RedisSinkError(
          'sink_unavailable',
          `the connection to Redis at ${resolved.target} is down; the client is reconnecting`,
        )
      }
      // Issued in one tick, the client writes them as one pipeline.
      return Promise.all(messages.map((message) => append(client, message, resolved)))
    },
    close() {
      closed = true
      closing ??= (async () => {
        const pending = current
        current = undefined
        const client = await pending?.catch(() => undefined)
        if (client === undefined || !client.isOpen) return
        if (client.isReady) await client.close().catch(() => client.destroy())
        else client.destroy()
      })()
      return closing
    },
  }
}

/**
 * {@link createRedisSink} from a URL: `redis://[user:password@]host:6379[/db]?stream=S`, optionally with
 * `&maxlen=<entries>` and `&dedupe_seconds=<seconds>`.
 *
 * @example
 * const sink = redisSinkFromUrl('redis://127.0.0.1:6379/0?stream=adcp:webhooks&maxlen=1000000&dedupe_seconds=86400')
 * sink.target // 'redis://127.0.0.1:6379/0?stream=adcp%3Awebhooks&maxlen=1000000'
 */
export function redisSinkFromUrl(url: string): Sink {
  return createRedisSink(redisSinkOptionsFromUrl(url))
}
