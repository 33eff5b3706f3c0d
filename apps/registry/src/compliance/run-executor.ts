/**
 * Where a claimed compliance run is performed. The registry's queue (runs.ts) claims a run with a lease, hands
 * it to an executor and stores what comes back; the executor decides which event loop pays for the run.
 *
 * - {@link workerRunExecutor} (the service): one worker thread (run-worker.ts) performs every run, so the CPU
 *   a run costs (schema validation of every response, the MCP and A2A clients) never delays a request. A worker
 *   that dies (crash, out of memory, or terminated for overrunning the run timeout) fails the runs it held with
 *   {@link WorkerCrashedError}: the queue then leaves them to their lease, and once it expires they are
 *   reclaimed and run again like the runs of a crashed instance. The next run starts a fresh worker.
 * - {@link inProcessRunExecutor}: on the caller's event loop, for tests that give their own fetch or bundle.
 */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { Bundle } from '@adwire/storyboards'
import type { AgentCredential } from './contract.js'
import type { AgentAccessPolicy } from './probe.js'
import { performRun, type Performed } from './runs-perform.js'
import type { StoredRun } from './runs-store.js'

export interface RunExecutor {
  /**
   * Performs `run` with the credentials looked up for it. Rejects with {@link WorkerCrashedError} when the
   * worker performing it died, and with an `AbortError` when `signal` aborts (the registry is stopping) once
   * the exchange in flight is over.
   */
  perform(
    run: StoredRun,
    credentials: Readonly<Record<string, AgentCredential | undefined>>,
    signal: AbortSignal,
  ): Promise<Performed>
  /** Stops the worker, if any (runs in flight reject). */
  close(): Promise<void>
}

/** The worker performing a run died before answering; the run's lease decides when it runs again. */
export class WorkerCrashedError extends Error {
  override readonly name = 'WorkerCrashedError'
}

/** What the worker thread is started with (plain data: it crosses the thread boundary). */
export interface RunWorkerData {
  readonly agents: AgentAccessPolicy
  readonly stepTimeoutMs: number
  readonly runTimeoutMs: number
}

/** Registry → worker. */
export type ToWorker =
  | {
      readonly type: 'perform'
      readonly id: string
      readonly run: StoredRun
      readonly credentials: Readonly<Record<string, AgentCredential | undefined>>
    }
  | { readonly type: 'abort'; readonly id: string }

/** Worker → registry. */
export type FromWorker =
  | { readonly type: 'performed'; readonly id: string; readonly performed: Performed }
  | { readonly type: 'failed'; readonly id: string; readonly message: string; readonly stack?: string }

const aborted = () => Object.assign(new Error('the registry is stopping this run'), { name: 'AbortError' })

/**
 * Performs runs on the caller's event loop.
 *
 * @example
 * const executor = inProcessRunExecutor({ fetch, bundle: () => storyboardBundle(), now: Date.now, stepTimeoutMs: 30_000, runTimeoutMs: 600_000 })
 */
export function inProcessRunExecutor(options: {
  readonly fetch: typeof fetch
  readonly bundle: () => Bundle
  readonly now: () => number
  readonly stepTimeoutMs: number
  readonly runTimeoutMs: number
}): RunExecutor {
  return {
    perform: (run, credentials, signal) =>
      performRun(run, {
        fetch: options.fetch,
        bundle: options.bundle(),
        now: options.now,
        credentials,
        signal,
        stepTimeoutMs: options.stepTimeoutMs,
        runTimeoutMs: options.runTimeoutMs,
      }),
    close: async () => {},
  }
}

/** The worker's entry: the built file beside the bundle, else (tests, from source) the TypeScript one via tsx. */
function workerEntry(): { url: URL; execArgv: string[] } {
  const built = new URL('./compliance-worker.js', import.meta.url)
  if (import.meta.url.endsWith('.js') && existsSync(fileURLToPath(built))) return { url: built, execArgv: [] }
  const source = new URL('./run-worker.ts', import.meta.url)
  const tsx = createRequire(import.meta.url).resolve('tsx')
  return { url: source, execArgv: ['--import', tsx] }
}

export interface WorkerRunExecutor extends RunExecutor {
  /** The live worker's thread id, if one is running (tests). */
  readonly threadId: number | undefined
  /** Kills the worker as a crash would: its runs reject with {@link WorkerCrashedError} (tests). */
  crash(): Promise<void>
}

/**
 * Performs runs on one worker thread, started on the first run and again after a crash. A run that overruns
 * `runTimeoutMs` by `graceMs` (a worker stuck in a loop) gets the worker terminated.
 *
 * @example
 * const executor = workerRunExecutor({ agents: DEFAULT_AGENT_ACCESS, stepTimeoutMs: 30_000, runTimeoutMs: 600_000 })
 * const performed = await executor.perform(run, {}, new AbortController().signal)
 */
export function workerRunExecutor(
  data: RunWorkerData,
  options: {
    readonly log?: (entry: Record<string, unknown>) => void
    /** How long past `runTimeoutMs` a run may go before the worker is terminated. Default 60,000 ms. */
    readonly graceMs?: number
    /** How long a stopping run may finish the exchange in flight. Default 10,000 ms. */
    readonly stopGraceMs?: number
  } = {},
): WorkerRunExecutor {
  const graceMs = options.graceMs ?? 60_000
  const stopGraceMs = options.stopGraceMs ?? 10_000
  const pending = new Map<
    string,
    { resolve: (performed: Performed) => void; reject: (error: Error) => void }
  >()
  const owners = new Map<string, Worker>()
  let worker: Worker | undefined
  let closed = false

  const failAll = (worker: Worker, error: Error) => {
    for (const [id, waiter] of pending) {
      if (owners.get(id) !== worker) continue
      pending.delete(id)
      owners.delete(id)
      waiter.reject(error)
    }
  }

  const spawn = (): Worker => {
    const entry = workerEntry()
    const started = new Worker(entry.url, {
      workerData: data,
      execArgv: entry.execArgv,
      name: 'registry-compliance-runs',
    })
    started.unref()
    started.on('message', (message: FromWorker) => {
      const waiter = pending.get(message.id)
      if (!waiter) return
      pending.delete(message.id)
      owners.delete(message.id)
      if (message.type === 'performed') waiter.resolve(message.performed)
      else waiter.reject(Object.assign(new Error(message.message), { stack: message.stack }))
    })
    started.on('error', (error) => {
      options.log?.({ compliance_worker: 'crashed', error: String(error.stack ?? error) })
      failAll(started, new WorkerCrashedError(`the compliance worker crashed: ${error.message}`))
    })
    started.on('exit', (code) => {
      if (worker === started) worker = undefined
      failAll(started, new WorkerCrashedError(`the compliance worker exited (code ${code})`))
    })
    return started
  }

  return {
    get threadId() {
      return worker?.threadId
    },
    perform(run, credentials, signal) {
      if (closed) return Promise.reject(aborted())
      if (signal.aborted) return Promise.reject(aborted())
      const current = (worker ??= spawn())
      const id = crypto.randomUUID()
      return new Promise<Performed>((resolve, reject) => {
        const overrun = setTimeout(() => {
          options.log?.({
            compliance_worker: 'terminated',
            run: run.id,
            reason: 'the run overran its timeout',
          })
          void current.terminate()
        }, data.runTimeoutMs + graceMs)
        overrun.unref()
        // Stopping: the worker starts no new exchange and answers once the one in flight is over (an agent
        // sees a request completed, not a connection cut mid-body); after `stopGraceMs` the caller goes on.
        let stopTimer: ReturnType<typeof setTimeout> | undefined
        const onAbort = () => {
          current.postMessage({ type: 'abort', id } satisfies ToWorker)
          stopTimer = setTimeout(() => {
            settle()
            reject(aborted())
          }, stopGraceMs)
          stopTimer.unref()
        }
        const settle = () => {
          clearTimeout(overrun)
          clearTimeout(stopTimer)
          signal.removeEventListener('abort', onAbort)
          pending.delete(id)
          owners.delete(id)
        }
        signal.addEventListener('abort', onAbort, { once: true })
        pending.set(id, {
          resolve: (performed) => {
            settle()
            if (signal.aborted) reject(aborted())
            else resolve(performed)
          },
          reject: (error) => {
            settle()
            reject(signal.aborted ? aborted() : error)
          },
        })
        owners.set(id, current)
        current.postMessage({ type: 'perform', id, run, credentials } satisfies ToWorker)
      })
    },
    async crash() {
      await worker?.terminate()
    },
    async close() {
      closed = true
      const stopping = worker
      worker = undefined
      await stopping?.terminate()
    },
  }
}
