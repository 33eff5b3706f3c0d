/**
 * Runs the creative agent: listens, derives the public URL (PUBLIC_URL, else the address listened on), opens
 * the dependencies, serves the app, sweeps expired idempotency records and preview pages; `close()` shuts it all
 * down in order.
 * server.ts calls it with process.env; tests call it with their own env on port 0.
 */
import { refusedRequest } from '@adwire/agent-server'
import { listen, type Listener } from '@adwire/service-kit'
import { createApp } from './app.js'
import { adcpErrorResponse } from './http-errors.js'
import { openDeps, type DepsOverrides, type Runtime } from './deps.js'
import type { CreativeAgentEnv } from './env.js'

export interface RunningCreativeAgent {
  readonly port: number
  /** A URL this machine reaches it at (the loopback URL when it listens on every interface). */
  readonly url: string
  /** The socket: the address actually bound (`listener.boundUrl`) and the drain. */
  readonly listener: Listener
  /** The agent's public base URL (PUBLIC_URL, else `url`): format_id agent_url, preview URLs, brand.json. */
  readonly publicUrl: string
  readonly runtime: Runtime
  /** Stops accepting, lets in-flight requests and async builds finish (up to `graceMs`), closes the database. */
  close(graceMs?: number): Promise<void>
}

export interface StartOptions extends DepsOverrides {
  /** How often expired idempotency records and preview pages are swept, seconds. Default 60. */
  readonly sweepIntervalSeconds?: number
}

/**
 * Starts the creative agent.
 *
 * @example
 * const agent = await startCreativeAgent(parseEnv({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: 'sqlite:/tmp/ca.sqlite' }))
 * // MCP at `${agent.url}/mcp`, A2A at `${agent.url}/a2a`
 * await agent.close()
 */
export async function startCreativeAgent(
  env: CreativeAgentEnv,
  options: StartOptions = {},
): Promise<RunningCreativeAgent> {
  const listener = await listen({
    port: env.port,
    host: env.host,
    limits: env.http,
    ...(options.log ? { log: options.log } : {}),
    refuse: refusedRequest,
    starting: () => adcpErrorResponse('SERVICE_UNAVAILABLE', 'the agent is starting', { retryAfter: 1 }),
  })
  const url = listener.url
  const publicUrl = env.publicUrl ?? url

  let runtime: Runtime
  try {
    runtime = await openDeps(env, publicUrl, options)
  } catch (error) {
    await listener.close()
    throw error
  }
  listener.handle(createApp(runtime.deps).fetch)

  const now = options.now ?? (() => Date.now() / 1000)
  const sweep = setInterval(
    () =>
      void runtime.deps.storage
        .sweep(now())
        .catch((error: unknown) => runtime.deps.log({ sweep: 'failed', error: String(error) })),
    (options.sweepIntervalSeconds ?? 60) * 1000,
  )
  sweep.unref()

  let closing: Promise<void> | undefined
  return {
    port: listener.port,
    url,
    listener,
    publicUrl,
    runtime,
    close(graceMs = 10_000) {
      closing ??= (async () => {
        clearInterval(sweep)
        await listener.close(graceMs)
        await runtime.close()
      })()
      return closing
    },
  }
}
