/**
 * Runs the receiver: dependencies from the environment, the app on @hono/node-server, the relay, and a
 * periodic sweep of expired dedup records; `close()` shuts it all down in order. server.ts calls it with
 * process.env; the tests call it with their own env on port 0.
 */
import { listen, type Listener } from '@adwire/service-kit'
import { createSweeper } from '@adwire/webhooks'
import { createApp } from './app.js'
import { createDeliveries, deliveryIntercept } from './deliveries.js'
import { openDeps, type DepsOverrides, type Runtime } from './deps.js'
import type { ReceiverEnv } from './env.js'

export interface RunningReceiver {
  readonly port: number
  /** A URL this machine reaches it at (the loopback URL when it listens on every interface). */
  readonly url: string
  /** The socket: the address actually bound (`listener.boundUrl`) and the drain. */
  readonly listener: Listener
  readonly runtime: Runtime
  /** Stops accepting, ends streams, lets in-flight requests finish (up to `graceMs`), closes the database. */
  close(graceMs?: number): Promise<void>
}

export interface StartOptions extends DepsOverrides {
  /** How often expired dedup records, replay nonces and old failures are deleted, seconds. Default 60. */
  readonly sweepIntervalSeconds?: number
}

/**
 * @example
 * const receiver = await startReceiver(parseEnv({ PORT: '0', DATABASE_URL: 'sqlite:/tmp/r.sqlite' }))
 * await fetch(`${receiver.url}/health`)
 * await receiver.close()
 */
export async function startReceiver(env: ReceiverEnv, options: StartOptions = {}): Promise<RunningReceiver> {
  const runtime = await openDeps(env, options)
  const { deps } = runtime
  let listener: Listener
  try {
    // One receiver core for both paths: the node:http fast path for plain deliveries, the Hono route for the rest.
    const deliveries = createDeliveries(deps)
    listener = await listen({
      fetch: createApp(deps, deliveries).fetch,
      intercept: deliveryIntercept(deliveries, deps.publicUrl),
      port: env.port,
      host: env.host,
      limits: env.http,
      ...(options.log ? { log: options.log } : {}),
      // The receiver's error shape, as its routes answer: `{"error":{"code","message"}}`.
      refuse: (refusal) =>
        Response.json(
          { error: { code: refusal.code, message: refusal.message } },
          { status: refusal.status, headers: { 'cache-control': 'no-store' } },
        ),
    })
  } catch (error) {
    await runtime.close()
    throw error
  }
  runtime.forwarder?.start()

  const sweeper = createSweeper([deps.storage], {
    intervalSeconds: options.sweepIntervalSeconds ?? 60,
    ...(deps.now ? { now: deps.now } : {}),
    onError: (error) => deps.log({ sweep: 'failed', error: String(error) }),
  })
  sweeper.start()

  let closing: Promise<void> | undefined
  return {
    port: listener.port,
    url: listener.url,
    listener,
    runtime,
    close(graceMs = 10_000) {
      closing ??= (async () => {
        await sweeper.stop()
        const drained = listener.close(graceMs)
        // Streams end right away: they would hold the drain open.
        deps.hub.close()
        await drained
        await runtime.close()
      })()
      return closing
    },
  }
}
