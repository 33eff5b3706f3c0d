/**
 * The four services as real child processes for the security tests: each app's built `server.js` (`pnpm build`
 * makes it; `pnpm test` builds first) on 127.0.0.1 and a free port, a fresh SQLite file, its stdout kept; and
 * the resident memory of a process read from /proc/<pid>/status.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The oversized chunked sender, shared with the apps' own body-limit tests. */
export { streamUntilAnswered } from '@adwire/service-kit/testing'

export type App = 'registry' | 'creative-agent' | 'receiver' | 'sales-agent'

export const TOKEN = 'tok_security_0123456789abcdef'
export const ADMIN_TOKEN = 'admin_security_0123456789'

const ENV: Record<App, Record<string, string>> = {
  registry: { SEED: '0' },
  'creative-agent': { TOKENS: `buyer-1:${TOKEN}` },
  receiver: { ADMIN_TOKEN },
  'sales-agent': { TOKENS: `buyer-1:${TOKEN}:read+write` },
}

export interface ServiceProcess {
  readonly app: App
  readonly url: string
  readonly pid: number
  /** Every stdout line so far. */
  readonly lines: string[]
  stop(): Promise<void>
}

const root = join(dirname(fileURLToPath(import.meta.url)), '../../../..')

/** Starts `apps/{app}/dist/server.js` with `env` and resolves once it prints the address it listens on. */
export async function startService(app: App, env: Record<string, string> = {}): Promise<ServiceProcess> {
  // The built entry starts in about half the time of `server.ts` through tsx (no transpiling at start).
  const entry = join(root, 'apps', app, 'dist', 'server.js')
  if (!existsSync(entry))
    throw new Error(`${entry} is missing: build first (pnpm build; the root pnpm test does)`)
  const dir = mkdtempSync(join(tmpdir(), `adwire-security-${app}-`))
  const child: ChildProcess = spawn(process.execPath, [entry], {
    cwd: join(root, 'apps', app),
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`,
      ...ENV[app],
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  let errors = ''
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()))
  const url = await new Promise<string>((resolve, reject) => {
    let pending = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString()
      const parts = pending.split('\n')
      pending = parts.pop() ?? ''
      for (const line of parts) {
        lines.push(line)
        const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line)
        if (found) resolve(found[1]!)
      }
    })
    child.once('exit', (code) => reject(new Error(`${app} exited with ${code}: ${errors}`)))
    setTimeout(() => reject(new Error(`${app} did not start: ${errors}`)), 60_000).unref()
  })
  return {
    app,
    url,
    pid: child.pid!,
    lines,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGTERM')
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** A memory figure of /proc/<pid>/status in KiB: `VmRSS` (resident now) or `VmHWM` (its peak). */
export function memoryKiB(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const found = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)
  if (!found) throw new Error(`no ${field} for ${pid}`)
  return Number(found[1])
}

/** A POST of `body` (a string sent as is) with a JSON content type; the status and the parsed JSON answer. */
export async function postJson(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body,
  })
  const text = await response.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = text
  }
  return { status: response.status, json }
}
