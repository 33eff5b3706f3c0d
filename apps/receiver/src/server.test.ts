/**
 * The entry point as a process: it starts from its environment, serves, and stops cleanly on SIGTERM.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { tempDir } from './test-support.js'

const entry = fileURLToPath(new URL('./server.ts', import.meta.url))

function startProcess(env: Record<string, string>): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    env: { PATH: process.env.PATH ?? '', ...env },
  })
}

/** Collects output until `pattern` matches (or the process exits). */
function waitFor(child: ChildProcessWithoutNullStreams, pattern: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let output = ''
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = pattern.exec(output)
      if (match) resolve(match)
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.once('exit', (code) => reject(new Error(`exited with ${code} before ${pattern}:\n${output}`)))
  })
}

const exitCode = (child: ChildProcessWithoutNullStreams) =>
  new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))

describe('server.ts', () => {
  it('prints the generated admin token, serves, and shuts down gracefully on SIGTERM', async () => {
    const child = startProcess({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(tempDir(), 'r.sqlite')}`,
    })
    const exited = exitCode(child)
    try {
      // Both lines are awaited together: they may arrive in one chunk, in either order (they do on Node 24).
      const [[, url], [, token]] = await Promise.all([
        waitFor(child, /listening on (http:\/\/\S+)/),
        waitFor(child, /ADMIN_TOKEN=(\S+)/),
      ])
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

  it('refuses a bad environment, naming the variable', async () => {
    const child = startProcess({ PORT: 'eighty', DATABASE_URL: 'mysql://nope' })
    const exited = exitCode(child)
    const [message] = await Promise.all([waitFor(child, /DATABASE_URL: [^\n]+/), exited])
    expect(message[0]).toContain('sqlite:PATH or a postgres:// URL')
    expect(await exited).toBe(1)
  }, 30_000)
})
