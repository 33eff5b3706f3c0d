import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import { levelOf, logLevelFrom, runService, serviceLog } from './index.js'

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

  it('logs structured entries in the same format as its lines: the name, then one JSON object', async () => {
    const { host, emitter, lines, exited } = fakeProcess()
    await runService({
      name: 'demo',
      process: host,
      async start(print, log) {
        print('listening on http://127.0.0.1:1')
        log({ sweep: 'failed', error: 'line one\nline two' })
        return { close: async () => {} }
      },
    })
    emitter.emit('SIGTERM', 'SIGTERM')
    expect(await exited).toBe(0)
    // Every line of the process carries the prefix: no bare JSON line among them, one line per entry.
    expect(lines.join('').split('\n').filter(Boolean)).toHaveLength(4)
    for (const line of lines) expect(line).toMatch(/^demo: .*\n$/s)
    const entry = JSON.parse(lines[1]!.slice('demo: '.length)) as Record<string, unknown>
    expect(entry).toMatchObject({ sweep: 'failed', error: 'line one\nline two' })
    expect(new Date(entry.at as string).toISOString()).toBe(entry.at)
    const fixed: string[] = []
    serviceLog('x', { write: (text: string) => fixed.push(text) > 0 }, () => new Date(0))({ a: 1 })
    expect(fixed).toEqual(['x: {"at":"1970-01-01T00:00:00.000Z","level":"info","a":1}\n'])
  })

  it('writes each entry at its level and leaves out those below the minimum', () => {
    const lines: string[] = []
    const write = (text: string) => lines.push(text) > 0
    const log = serviceLog('x', { write }, () => new Date(0), 'warn')
    log({ level: 'debug', polled: 1 })
    log({ served: 1 })
    log({ level: 'warn', slow: true })
    log({ sweep: 'failed', error: 'disk full' })
    log({ level: 'nonsense', odd: true })
    expect(lines.map((line) => JSON.parse(line.slice(3)) as Record<string, unknown>)).toEqual([
      { at: '1970-01-01T00:00:00.000Z', level: 'warn', slow: true },
      { at: '1970-01-01T00:00:00.000Z', level: 'error', sweep: 'failed', error: 'disk full' },
    ])
    expect([levelOf({}), levelOf({ error: 'x' }), levelOf({ level: 'debug', error: 'x' })]).toEqual([
      'info',
      'error',
      'debug',
    ])
    expect([logLevelFrom(undefined), logLevelFrom(''), logLevelFrom(' WARN ')]).toEqual([
      'info',
      'info',
      'warn',
    ])
    expect(() => logLevelFrom('verbose')).toThrow(/LOG_LEVEL must be one of debug, info, warn, error/)
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
