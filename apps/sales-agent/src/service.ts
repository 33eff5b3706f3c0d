/**
 * Runs the sales agent: listens, derives the public URL (PUBLIC_URL, else the address listened on), opens
 * the dependencies, serves the app, sweeps expired idempotency records and old webhook bookkeeping; `close()` shuts it all
 * down in order.
 * server.ts calls it with process.env; tests call it with their own env on port 0.
 */
import { AGENT_LISTEN_ANSWERS } from '@adwire/agent-server/host'
import { startService, type RunningService } from '@adwire/service-kit'
import { createApp } from './app.js'
import { openDeps, type DepsOverrides, type Runtime } from './deps.js'
import type { SalesAgentEnv } from './env.js'

/**
 * The running agent: `port`, `url` (a URL this machine reaches it at), `listener` (the address bound, the
 * drain), `publicUrl` (PUBLIC_URL, else `url`: brand.json, the agent card), `runtime`, and `close(graceMs?)`,
 * which stops the periodic work (waiting for a tick in flight), lets in-flight requests and background work
 * finish (up to `graceMs`) and closes the database.
 */
export type RunningSalesAgent = RunningService<Runtime>

export interface StartOptions extends DepsOverrides {
  /** How often expired idempotency records are swept, seconds. Default 60. */
  readonly sweepIntervalSeconds?: number
  /** How often the seller's clock ticks over the live buys (see seller-runtime.ts), seconds. Default 30; 0: never. */
  readonly tickSeconds?: number
  /** How often due reviews (async/due-work.ts) are looked for, milliseconds. Default 1000; 0: never. */
  readonly dueTickMs?: number
}

/**
 * Starts the sales agent.
 *
 * @example
 * const agent = await startSalesAgent(parseEnv({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: 'sqlite:/tmp/sa.sqlite' }))
 * // MCP at `${agent.url}/mcp`, A2A at `${agent.url}/a2a`
 * await agent.close()
 */
export async function startSalesAgent(
  env: SalesAgentEnv,
  options: StartOptions = {},
): Promise<RunningSalesAgent> {
  const { sweepIntervalSeconds, tickSeconds, dueTickMs, ...overrides } = options
  return startService({
    port: env.port,
    host: env.host,
    limits: env.http,
    ...(options.log ? { log: options.log } : {}),
    ...AGENT_LISTEN_ANSWERS,
    publicUrl: env.publicUrl,
    open: (publicUrl) => openDeps(env, publicUrl, overrides),
    app: (runtime) => createApp(runtime.deps).fetch,
    // The snapshot is readable now: a new capabilities_version is announced (capabilities.changed).
    started: ({ deps }) =>
      deps
        .announce()
        .catch((error: unknown) => deps.log({ capabilities: 'announce failed', error: String(error) })),
    loops: ({ deps }) => [
      // Expired idempotency records, then the webhook bookkeeping nothing reads any more.
      { name: 'sweep', everyMs: (sweepIntervalSeconds ?? 60) * 1000, run: () => deps.sweep() },
      // The seller's clock over the live buys.
      { name: 'tick', everyMs: (tickSeconds ?? 30) * 1000, run: () => deps.tick() },
      // Due reviews, stored: this instance or any other finishes each once (a lease claimed by compare-and-set).
      { name: 'due', everyMs: dueTickMs ?? 1000, run: () => deps.due() },
    ],
  })
}
