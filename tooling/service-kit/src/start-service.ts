/**
 * The start and stop order of a service that needs its own URL before it can build its app: listen (answering
 * `starting()` meanwhile), derive the public URL, open the runtime (database, keys, …), serve the app, run the
 * `started` step and the periodic loops; `close()` stops the loops, drains the socket, closes the runtime.
 */
import { startLoops, type Loop } from '@adwire/agent-server/host'
import { listen, type FetchHandler, type ListenOptions, type Listener } from './listen.js'

/** What a service opens once it knows its public URL: closed last. */
export interface ServiceRuntime {
  close(): Promise<void>
}

export interface StartServiceOptions<R extends ServiceRuntime> extends Omit<ListenOptions, 'fetch'> {
  /** The public base URL (PUBLIC_URL); unset: the listener's `url`. */
  readonly publicUrl?: string | undefined
  /** Opens the runtime; a rejection closes the socket and rejects the start. */
  readonly open: (publicUrl: string) => Promise<R>
  /** The handler over the opened runtime. */
  readonly app: (runtime: R) => FetchHandler
  /** Runs once the app serves (before the loops start); its failure is logged, not fatal. */
  readonly started?: (runtime: R) => Promise<unknown>
  /** The periodic work over the runtime. */
  readonly loops?: (runtime: R) => readonly Loop[]
}

/** A started service. */
export interface RunningService<R extends ServiceRuntime> {
  readonly port: number
  /** A URL this machine reaches it at (the loopback URL when it listens on every interface). */
  readonly url: string
  /** The socket: the address actually bound (`listener.boundUrl`) and the drain. */
  readonly listener: Listener
  /** The public base URL (PUBLIC_URL, else `url`). */
  readonly publicUrl: string
  readonly runtime: R
  /**
   * Stops the loops (waiting for their runs in flight), stops accepting and lets in-flight requests finish (up
   * to `graceMs`, default 10 s), then closes the runtime. Idempotent.
   */
  close(graceMs?: number): Promise<void>
}

/**
 * @example
 * const service = await startService({
 *   port: 0, publicUrl: env.publicUrl, starting: () => new Response(null, { status: 503 }),
 *   open: (publicUrl) => openDeps(env, publicUrl),
 *   app: (runtime) => createApp(runtime.deps).fetch,
 *   loops: (runtime) => [{ name: 'sweep', everyMs: 60_000, run: () => runtime.deps.storage.sweep(Date.now() / 1000) }],
 * })
 * await service.close()
 */
export async function startService<R extends ServiceRuntime>(
  options: StartServiceOptions<R>,
): Promise<RunningService<R>> {
  const { publicUrl: configured, open, app, started, loops, ...listenOptions } = options
  const log = options.log ?? (() => {})
  const listener = await listen(listenOptions)
  const url = listener.url
  const publicUrl = configured ?? url
  let runtime: R
  try {
    runtime = await open(publicUrl)
  } catch (error) {
    await listener.close()
    throw error
  }
  listener.handle(app(runtime))
  if (started)
    await started(runtime).catch((error: unknown) => log({ started: 'failed', error: String(error) }))
  const running = startLoops(loops?.(runtime) ?? [], log)
  let closing: Promise<void> | undefined
  return {
    port: listener.port,
    url,
    listener,
    publicUrl,
    runtime,
    close(graceMs = 10_000) {
      closing ??= (async () => {
        await running.stop()
        await listener.close(graceMs)
        await runtime.close()
      })()
      return closing
    },
  }
}
