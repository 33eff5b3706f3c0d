import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import { runService } from './index.js'

/** A stand-in for `process`: records output and the exit code instead of exiting. */
function fakeProcess() {
  const emitter = new EventEmitter()
  const lines: string[] = []
  let resolveExit!: (code: number) => void
  const exited = new Promise<number>((resolve) => (resolveExit = resolve))
  const write = (text: string) => {
    lines.push(text)
    return true
  }
  const host = {
    on: (event: string, listener: (...args: unknown[]) => void) => emitter.on(event, listener),
    exit: (code?: number) => resolveExit(code ?? 0),
    stdout: { write },
    stderr: { write },
  } as unknown as NodeJS.Process
  return { host, emitter, lines, exited }
}

describe('runService', () => {
  it('prints with the name, closes on SIGTERM once, and exits 0', async () => {
    const { host, emitter, lines, exited } = fakeProcess()
    let closes = 0
    await runService({
      name: 'demo',
      process: host,
      async start(print) {
        print('listening on http://127.0.0.1:1')
        return { close: async () => void closes++ }
      },
    })
    emitter.emit('SIGTERM', 'SIGTERM')
    emitter.emit('SIGINT', 'SIGINT')
    expect(await exited).toBe(0)
    expect(closes).toBe(1)
    expect(lines).toEqual([
      'demo: listening on http://127.0.0.1:1\n',
      'demo: SIGTERM, shutting down\n',
      'demo: stopped\n',
    ])
  })

  it('exits 1 with the environment message alone, or "cannot start"', async () => {
    class EnvError extends Error {
      override readonly name = 'EnvError'
    }
    const bad = fakeProcess()
    await runService({
      name: 'demo',
      process: bad.host,
      start: () => Promise.reject(new EnvError('invalid environment:\n  PORT: nope')),
    })
    expect(await bad.exited).toBe(1)
    expect(bad.lines).toEqual(['demo: invalid environment:\n  PORT: nope\n'])

    const broken = fakeProcess()
    await runService({
      name: 'demo',
      process: broken.host,
      start: () => Promise.reject(new Error('EADDRINUSE')),
    })
    expect(await broken.exited).toBe(1)
    expect(broken.lines).toEqual(['demo: cannot start: Error: EADDRINUSE\n'])
  })

  it('exits 1 when closing fails', async () => {
    const { host, emitter, lines, exited } = fakeProcess()
    await runService({
      name: 'demo',
      process: host,
      start: async () => ({ close: () => Promise.reject(new Error('disk gone')) }),
    })
    emitter.emit('SIGINT', 'SIGINT')
    expect(await exited).toBe(1)
    expect(lines.at(-1)).toBe('demo: shutdown failed: Error: disk gone\n')
  })
})
