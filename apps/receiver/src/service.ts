/**
 * Runs the receiver: dependencies from the environment, the app on @hono/node-server, the forwarder, and a
 * periodic sweep of expired dedup records; `close()` shuts it all down in order. server.ts calls it with
 * process.env; the tests call it with their own env on port 0.
 */
import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import { serve } from '@hono/node-server'
import { createSweeper } from '@adwire/webhooks'
import { createApp } from './app.js'
import { openDeps, type DepsOverrides, type Runtime } from './deps.js'
import type { ReceiverEnv } from './env.js'

export interface RunningReceiver {
  readonly port: number
  /** `http://127.0.0.1:{port}` (or the listening host). */
  readonly url: string
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
  let server: Server
  try {
    const app = createApp(deps)
    server = await new Promise<Server>((resolve, reject) => {
      const created = serve(
        { fetch: app.fetch, port: env.port, ...(env.host ? { hostname: env.host } : {}) },
        () => resolve(created as Server),
      ) as Server
      created.once('error', reject)
    })
  } catch (error) {
    await runtime.close()
    throw error
  }
  const address = server.address() as AddressInfo
  const host = !env.host || env.host === '0.0.0.0' || env.host === '::' ? '127.0.0.1' : env.host
  runtime.forwarder?.start()

  const sweeper = createSweeper([deps.storage], {
    intervalSeconds: options.sweepIntervalSeconds ?? 60,
    ...(deps.now ? { now: deps.now } : {}),
    onError: (error) => deps.log({ sweep: 'failed', error: String(error) }),
  })
  sweeper.start()

  let closing: Promise<void> | undefined
  return {
    port: address.port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    runtime,
    close(graceMs = 10_000) {
      closing ??= (async () => {
        sweeper.stop()
        const closed = new Promise<void>((resolve) => server.close(() => resolve()))
        // Streams end first (they would hold the server open); keep-alive sockets go as soon as they are
        // idle (a socket whose response just ended would otherwise wait for the keep-alive timeout).
        deps.hub.close()
        server.closeIdleConnections()
        const idle = setInterval(() => server.closeIdleConnections(), 50)
        const timer = setTimeout(() => server.closeAllConnections(), graceMs)
        await closed
        clearInterval(idle)
        clearTimeout(timer)
        await runtime.close()
      })()
      return closing
    },
  }
}
