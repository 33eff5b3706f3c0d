/**
 * Runs the sales agent: listens, derives the public URL (PUBLIC_URL, else the address listened on), opens
 * the dependencies, serves the app, sweeps expired idempotency records and old webhook bookkeeping; `close()` shuts it all
 * down in order.
 * server.ts calls it with process.env; tests call it with their own env on port 0.
 */
import { refusedRequest } from '@adwire/agent-server'
import { listen, type Listener } from '@adwire/service-kit'
import { createApp } from './app.js'
import { openDeps, type DepsOverrides, type Runtime } from './deps.js'
import type { SalesAgentEnv } from './env.js'
import { announceCapabilities, tickDueWork, pruneWebhookRecords, tickBuys } from '@adwire/seller'

export interface RunningSalesAgent {
  readonly port: number
  /** A URL this machine reaches it at (the loopback URL when it listens on every interface). */
  readonly url: string
  /** The socket: the address actually bound (`listener.boundUrl`) and the drain. */
  readonly listener: Listener
  /** The agent's public base URL (PUBLIC_URL, else `url`): brand.json, the agent card. */
  readonly publicUrl: string
  readonly runtime: Runtime
  /** Stops accepting, lets in-flight requests and background work finish (up to `graceMs`), closes the database. */
  close(graceMs?: number): Promise<void>
}

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
  const listener = await listen({
    port: env.port,
    host: env.host,
    limits: env.http,
    ...(options.log ? { log: options.log } : {}),
    refuse: refusedRequest,
    starting: () =>
      Response.json(
        {
          adcp_error: {
            code: 'SERVICE_UNAVAILABLE',
            message: 'the agent is starting',
            recovery: 'transient',
          },
        },
        { status: 503, headers: { 'retry-after': '1', 'cache-control': 'no-store' } },
      ),
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
  // The snapshot is readable now: a new capabilities_version is announced (capabilities.changed).
  await announceCapabilities(
    runtime.deps.storage.records,
    runtime.deps.events,
    runtime.deps.capabilitiesVersion,
  ).catch((error: unknown) => runtime.deps.log({ capabilities: 'announce failed', error: String(error) }))

  const now = options.now ?? (() => Date.now() / 1000)
  // Expired idempotency records, then the webhook bookkeeping nothing reads any more (events/retention.ts).
  const sweep = setInterval(
    () =>
      void runtime.deps.storage
        .sweep(now())
        .then(() =>
          pruneWebhookRecords(runtime.deps.storage.records, now(), env.webhookActivityRetentionSeconds),
        )
        .catch((error: unknown) => runtime.deps.log({ sweep: 'failed', error: String(error) })),
    (options.sweepIntervalSeconds ?? 60) * 1000,
  )
  sweep.unref()
  // One tick at a time: a slow tick is not overlapped by the next.
  let ticking: Promise<unknown> | undefined
  const tickSeconds = options.tickSeconds ?? 30
  const tick =
    tickSeconds > 0
      ? setInterval(() => {
          if (ticking) return
          ticking = tickBuys(runtime.deps.seller)
            .catch((error: unknown) => runtime.deps.log({ tick: 'failed', error: String(error) }))
            .finally(() => (ticking = undefined))
        }, tickSeconds * 1000)
      : undefined
  tick?.unref()
  // Due reviews, stored: this instance or any other finishes each once (a lease claimed by compare-and-set).
  let dueRunning: Promise<unknown> | undefined
  const dueTickMs = options.dueTickMs ?? 1000
  const due =
    dueTickMs > 0
      ? setInterval(() => {
          if (dueRunning) return
          dueRunning = tickDueWork(runtime.deps.seller)
            .catch((error: unknown) => runtime.deps.log({ due: 'failed', error: String(error) }))
            .finally(() => (dueRunning = undefined))
        }, dueTickMs)
      : undefined
  due?.unref()

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
        if (tick) clearInterval(tick)
        if (due) clearInterval(due)
        await ticking
        await dueRunning
        await listener.close(graceMs)
        await runtime.close()
      })()
      return closing
    },
  }
}
