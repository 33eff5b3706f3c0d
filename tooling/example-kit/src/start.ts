/**
 * Starts an example for real: its package.json `start` script, in its folder, with PORT=0 and the given
 * environment, and waits for the `listening on http://127.0.0.1:<port>` line it prints.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')

export interface RunningExample {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** Every line the example printed on stdout so far. */
  readonly lines: string[]
  /** Everything it printed on stderr so far. */
  readonly errors: string[]
  stop(): Promise<void>
}

export async function startExample(dir: string, env: Record<string, string>): Promise<RunningExample> {
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
    scripts: { start: string }
  }
  const child = spawn(manifest.scripts.start, {
    cwd: dir,
    shell: true,
    detached: true, // its own process group, so that stop() ends the shell and the server together
    env: {
      ...process.env,
      PATH: [
        path.join(dir, 'node_modules/.bin'),
        path.join(root, 'node_modules/.bin'),
        process.env.PATH,
      ].join(path.delimiter),
      PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  const errors: string[] = []
  let pending = ''
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${dir} did not start:\n${errors.join('')}`)), 50_000)
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk
      const parts = pending.split('\n')
      pending = parts.pop()!
      for (const line of parts) {
        lines.push(line)
        // Ours print `listening on …`; `next dev` prints `- Local: …`.
        const match = /(?:listening on|Local:)\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(line)
        if (match) {
          clearTimeout(timer)
          resolve(match[1]!)
        }
      }
    })
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => void errors.push(chunk))
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${dir} exited with ${code}:\n${errors.join('')}`))
    })
  })
  return { origin, lines, errors, stop: () => stop(child) }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  process.kill(-child.pid!, 'SIGTERM')
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 5_000)
  await exited
  clearTimeout(timer)
}

/** Runs an example's `start` script to completion: its exit code and stdout lines. */
export async function runExample(
  dir: string,
  env: Record<string, string>,
): Promise<{ code: number | null; lines: string[]; stderr: string }> {
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
    scripts: { start: string }
  }
  const child = spawn(manifest.scripts.start, {
    cwd: dir,
    shell: true,
    env: { ...process.env, PATH: pathFor(dir), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { code, lines: stdout.split('\n').filter((line) => line !== ''), stderr }
}

const pathFor = (dir: string) =>
  [path.join(dir, 'node_modules/.bin'), path.join(root, 'node_modules/.bin'), process.env.PATH].join(
    path.delimiter,
  )
