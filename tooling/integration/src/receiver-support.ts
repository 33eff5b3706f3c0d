/**
 * The reference receiver service (apps/receiver) from the outside, for the end-to-end tests and the bench:
 * its built entry point as a child process on 127.0.0.1, calls to its admin API, and schema cleanup.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import pg from 'pg'

export const ADMIN_TOKEN = 'integration-admin-token-0123456789'

/** The receiver's built entry point (`pnpm build` makes it; `pnpm test` builds first). */
export const RECEIVER_ENTRY = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@adwire/app-receiver/package.json')),
  'dist',
  'server.js',
)

/** A parsed JSON answer of the admin API: tests read it freely. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Body = any

/** A call to the receiver's admin API with the admin token. */
export async function api(
  base: string,
  route: string,
  body?: unknown,
  token = ADMIN_TOKEN,
): Promise<{ status: number; body: Body }> {
  const response = await fetch(`${base}${route}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : null }
}

/** One row of `GET /api/events`. */
export interface ReceiverEvent {
  readonly idempotency_key: string
  readonly operation_id: string | null
  readonly task_id: string | null
  readonly status: string | null
  readonly received_at: string
  readonly publications: number
}

/** Every event the receiver published for a registration, oldest first. */
export async function events(base: string, registration: string): Promise<ReceiverEvent[]> {
  const answer = await api(base, `/api/events?registration=${registration}&limit=10000`)
  if (answer.status !== 200) throw new Error(`GET /api/events answered ${answer.status}`)
  return answer.body.events as ReceiverEvent[]
}

/** A receiver running as its own process. */
export interface ReceiverProcess {
  readonly port: number
  /** `http://127.0.0.1:{port}` */
  readonly url: string
  readonly child: ChildProcessWithoutNullStreams
  /** Everything it printed so far (stdout and stderr). */
  output(): string
  /** Resolves with the signal (or exit code) once the process is gone. */
  readonly exited: Promise<NodeJS.Signals | number | null>
  /** SIGKILL, then waits for the process to be gone. */
  kill(): Promise<void>
  /** SIGTERM (graceful shutdown), then waits; SIGKILL if it has not stopped within 10 s. */
  stop(): Promise<void>
}

/**
 * Spawns `node apps/receiver/dist/server.js` on 127.0.0.1 (`port` 0: any free port) and resolves once it
 * listens and `GET /health` answers 200.
 */
export async function spawnReceiver(
  env: Record<string, string>,
  port = 0,
  /** Another entry script (run with tsx), e.g. a receiver with a fault injected. */
  entry?: string,
  /** Options for node itself (the bench's `--cpu-prof`). */
  nodeOptions: readonly string[] = [],
  /** For long runs (the soak): keep only the last `keepOutput` characters, and see every chunk as it comes. */
  watch: { readonly keepOutput?: number; readonly onOutput?: (text: string) => void } = {},
): Promise<ReceiverProcess> {
  if (!existsSync(RECEIVER_ENTRY))
    throw new Error(`${RECEIVER_ENTRY} is missing: build first (pnpm build; the root pnpm test does)`)
  const args = [
    ...nodeOptions,
    ...(entry ? ['--import', createRequire(import.meta.url).resolve('tsx'), entry] : [RECEIVER_ENTRY]),
  ]
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ADMIN_TOKEN, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let output = ''
  let listened = false
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code)),
  )
  const listening = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      const text = chunk.toString()
      output += text
      watch.onOutput?.(text)
      if (watch.keepOutput !== undefined && output.length > 2 * watch.keepOutput)
        output = output.slice(-watch.keepOutput)
      if (listened) return
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match) {
        listened = true
        resolve(match[1]!)
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.once('error', reject)
    void exited.then((how) => reject(new Error(`the receiver exited (${how}) before listening:\n${output}`)))
  })
  const url = await listening
  for (let attempt = 0; ; attempt += 1) {
    const health = await fetch(`${url}/health`).catch(() => undefined)
    if (health?.status === 200) break
    if (attempt > 100) throw new Error(`the receiver at ${url} never became healthy:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const gone = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    await exited
  }
  return {
    port: Number(new URL(url).port),
    url,
    child,
    output: () => output,
    exited,
    kill: () => gone('SIGKILL'),
    async stop() {
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await gone('SIGTERM')
      clearTimeout(timer)
    },
  }
}

/** A fresh PostgreSQL schema name. */
export const freshSchema = (prefix: string) =>
  `${prefix}_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`

export async function dropSchema(connectionString: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await client.end()
  }
}
