/**
 * The compliance worker thread (started by `workerRunExecutor`, run-executor.ts): performs the runs the registry
 * hands it, each with its own abort signal, and answers each with what it found. It holds no database
 * connection and no lease: the registry claims, renews, stores and reports, so a worker that dies loses nothing
 * but the runs in flight, which their lease brings back.
 */
import { parentPort, workerData } from 'node:worker_threads'
import type { FromWorker, RunWorkerData, ToWorker } from './run-executor.js'
import { createAgentFetch } from './probe.js'
import { storyboardBundle } from './runs-catalog.js'
import { performRun, type Performed } from './runs-perform.js'

const port = parentPort
if (!port) throw new Error('run-worker.ts runs as a worker thread (see workerRunExecutor)')
const data = workerData as RunWorkerData
const fetchImpl = createAgentFetch(data.agents)
const running = new Map<string, AbortController>()

/** Posts the answer; a value the structured clone refuses is sent as its JSON (what the registry stores anyway). */
function answer(message: FromWorker): void {
  try {
    port!.postMessage(message)
  } catch {
    port!.postMessage(JSON.parse(JSON.stringify(message)) as FromWorker)
  }
}

async function perform(message: Extract<ToWorker, { type: 'perform' }>): Promise<void> {
  const controller = new AbortController()
  running.set(message.id, controller)
  try {
    const performed: Performed = await performRun(message.run, {
      fetch: fetchImpl,
      bundle: storyboardBundle(),
      now: Date.now,
      credentials: message.credentials,
      signal: controller.signal,
      stepTimeoutMs: data.stepTimeoutMs,
      runTimeoutMs: data.runTimeoutMs,
    })
    answer({ type: 'performed', id: message.id, performed })
  } catch (error) {
    answer({
      type: 'failed',
      id: message.id,
      message: error instanceof Error ? error.message : String(error),
      ...(error instanceof Error && error.stack ? { stack: error.stack } : {}),
    })
  } finally {
    running.delete(message.id)
  }
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'abort') running.get(message.id)?.abort()
  else void perform(message)
})
