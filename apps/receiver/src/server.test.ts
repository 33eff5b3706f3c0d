/**
 * The entry point as a process: it starts from its environment, serves, and stops cleanly on SIGTERM.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { tempDir } from './testing/receiver.js'

const entry = fileURLToPath(new URL('./server.ts', import.meta.url))

/** Everything a child printed so far (stdout and stderr), recorded from its start. */
const outputs = new WeakMap<ChildProcessWithoutNullStreams, { text: string }>()

function startProcess(env: Record<string, string>): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    env: { PATH: process.env.PATH ?? '', ...env },
  })
  const output = { text: '' }
  outputs.set(child, output)
  const record = (chunk: Buffer) => void (output.text += chunk.toString())
  child.stdout.on('data', record)
  child.stderr.on('data', record)
  return child
}

/** Resolves when the output so far matches `pattern` (lines printed before the call count too). */
function waitFor(child: ChildProcessWithoutNullStreams, pattern: RegExp): Promise<RegExpMatchArray> {
  const output = outputs.get(child)!
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(output.text)
      if (!match) return false
      child.stdout.off('data', check)
      child.stderr.off('data', check)
      resolve(match)
      return true
    }
    if (check()) return
    child.stdout.on('data', check)
    child.stderr.on('data', check)
    child.once('exit', (code) => reject(new Error(`exited with ${code} before ${pattern}:\n${output.text}`)))
  })
}

const exitCode = (child: ChildProcessWithoutNullStreams) =>
  new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))

describe('server.ts', () => {
  it('prints the generated admin token, serves, and shuts down gracefully on SIGTERM', async () => {
    const child = startProcess({
      PORT: '0',
      DATABASE_URL: `sqlite:${join(tempDir(), 'r.sqlite')}`,
    })
    const exited = exitCode(child)
    try {
      // HOST unset: loopback only, and the log names it.
      const [, url] = await waitFor(child, /listening on (http:\/\/127\.0\.0\.1:\d+) \(SQLite /)
      const [, token] = await waitFor(child, /ADMIN_TOKEN=(\S+)/)
      const health = await fetch(`${url}/health`)
      expect(await health.json()).toEqual({ status: 'ok', database: 'sqlite' })
      const listed = await fetch(`${url}/api/registrations`, {
        headers: { authorization: `Bearer ${token}` },
      })
      expect(listed.status).toBe(200)
      // An open stream must not hold the shutdown up.
      const stream = await fetch(`${url}/api/stream`, { headers: { authorization: `Bearer ${token}` } })
      expect(stream.status).toBe(200)
      const stopped = waitFor(child, /receiver: stopped/)
      child.kill('SIGTERM')
      await stopped
      expect(await exited).toBe(0)
    } finally {
      child.kill('SIGKILL')
    }
  }, 30_000)

  it('with HOST=0.0.0.0 binds every interface and logs that address, not loopback', async () => {
    const child = startProcess({
      PORT: '0',
      HOST: '0.0.0.0',
      DATABASE_URL: `sqlite:${join(tempDir(), 'r.sqlite')}`,
    })
    const exited = exitCode(child)
    try {
      const [, port, local] = await waitFor(
        child,
        /listening on http:\/\/0\.0\.0\.0:(\d+) \(every interface; this machine: (http:\/\/127\.0\.0\.1:\d+)\)/,
      )
      expect(local).toBe(`http://127.0.0.1:${port}`)
      expect((await fetch(`${local}/health`)).status).toBe(200)
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
    } finally {
      child.kill('SIGKILL')
    }
  }, 30_000)

  it('refuses a bad environment, naming the variable', async () => {
    const child = startProcess({ PORT: 'eighty', DATABASE_URL: 'mysql://nope' })
    const exited = exitCode(child)
    const [message] = await Promise.all([waitFor(child, /DATABASE_URL: [^\n]+/), exited])
    expect(message[0]).toContain('sqlite:PATH or a postgres:// URL')
    expect(await exited).toBe(1)
  }, 30_000)
})
