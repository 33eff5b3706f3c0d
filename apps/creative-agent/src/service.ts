/**
 * Runs the creative agent: listens, derives the public URL (PUBLIC_URL, else the address listened on), opens
 * the dependencies, serves the app, sweeps expired idempotency records and preview pages; `close()` shuts it all
 * down in order.
 * server.ts calls it with process.env; tests call it with their own env on port 0.
 */
import { AGENT_LISTEN_ANSWERS } from '@adwire/agent-server/host'
import { startService, type RunningService } from '@adwire/service-kit'
import { createApp } from './app.js'
import { openDeps, type DepsOverrides, type Runtime } from './deps.js'
import type { CreativeAgentEnv } from './env.js'

/**
 * The running agent: `port`, `url` (a URL this machine reaches it at), `listener` (the address bound, the
 * drain), `publicUrl` (PUBLIC_URL, else `url`: format_id agent_url, preview URLs, brand.json), `runtime`, and
 * `close(graceMs?)`, which stops the sweep, lets in-flight requests and async builds finish (up to `graceMs`)
 * and closes the database.
 */
export type RunningCreativeAgent = RunningService<Runtime>

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
  const now = options.now ?? (() => Date.now() / 1000)
  return startService({
    port: env.port,
    host: env.host,
    limits: env.http,
    ...(options.log ? { log: options.log } : {}),
    ...AGENT_LISTEN_ANSWERS,
    publicUrl: env.publicUrl,
    open: (publicUrl) => openDeps(env, publicUrl, options),
    app: (runtime) => createApp(runtime.deps).fetch,
    loops: (runtime) => [
      {
        name: 'sweep',
        everyMs: (options.sweepIntervalSeconds ?? 60) * 1000,
        run: () => runtime.deps.storage.sweep(now()),
      },
    ],
  })
}
