import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { SCHEMA_VERSION, openSqliteStores } from './index.js'
import type { ChildMessage, ParentMessage } from './testing/process-fixture.js'

const here = dirname(fileURLToPath(import.meta.url))
const directory = mkdtempSync(join(tmpdir(), 'adwire-store-sqlite-processes-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

const children: ChildProcess[] = []
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

/** Starts the fixture in a separate Node process with an IPC channel. */
function start(mode: string, path: string, key?: string): ChildProcess {
  const child = fork(
    join(here, 'testing', 'process-fixture.ts'),
    key === undefined ? [mode, path] : [mode, path, key],
    {
      execArgv: ['--import', 'tsx'],
      cwd: join(here, '..'),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  )
  children.push(child)
  return child
}

/** The next message of `type` from `child` (rejects if it exits first). */
function next<T extends ChildMessage['type']>(
  child: ChildProcess,
  type: T,
): Promise<Extract<ChildMessage, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: ChildMessage) => {
      if (message.type !== type) return
      child.off('message', onMessage).off('exit', onExit)
      resolve(message as Extract<ChildMessage, { type: T }>)
    }
    const onExit = (code: number | null, signal: string | null) =>
      reject(new Error(`child exited (${code ?? signal}) before sending ${type}`))
    child.on('message', onMessage).once('exit', onExit)
  })
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  )

const tell = (child: ChildProcess, message: ParentMessage) => child.send(message)

const claimInput = (key: string, now: number) => ({
  namespace: 'webhook' as const,
  scope: 'sender-1',
  key,
  fingerprint: 'f'.repeat(64),
  now,
  leaseSeconds: 30,
  retentionSeconds: 86_400,
})

describe('several processes on one file', () => {
  it('opens a fresh file from four processes at once and gives each key to exactly one of them', async () => {
    const path = join(directory, 'race.db')
    const racers = Array.from({ length: 4 }, () => start('race', path))
    await Promise.all(racers.map((child) => next(child, 'started')))
    // Open (WAL switch and migrations) at the same moment, then claim the same keys in the same order.
    const ready = racers.map((child) => next(child, 'ready'))
    for (const child of racers) tell(child, { type: 'open' })
    await Promise.all(ready)
    const keys = Array.from({ length: 200 }, (_, index) => `race-${index}`)
    const results = racers.map((child) => next(child, 'results'))
    for (const child of racers) tell(child, { type: 'go', keys })
    const outcomes = (await Promise.all(results)).map((message) => message.results)
    await Promise.all(racers.map(exited))

    for (const [index] of keys.entries()) {
      const kinds = outcomes.map((perChild) => perChild[index]).sort()
      expect(kinds).toEqual(['claimed', 'processing', 'processing', 'processing'])
    }
    const stores = openSqliteStores({ path })
    expect(stores.database.prepare('SELECT count(*) FROM claims').pluck().get()).toBe(200)
    expect(stores.database.prepare('SELECT records FROM claim_scopes').pluck().all()).toEqual([200])
    expect(stores.database.prepare('SELECT count(*) FROM schema_migrations').pluck().get()).toBe(
      SCHEMA_VERSION,
    )
    stores.close()
  })

  it('survives SIGKILL inside a write transaction: the claim stays until its lease ends, the rest rolls back', async () => {
    const path = join(directory, 'killed.db')
    const child = start('die', path, 'delivery-1')
    const { fence } = await next(child, 'claimed')
    await next(child, 'holding')
    child.kill('SIGKILL')
    await exited(child)
    expect(child.signalCode).toBe('SIGKILL')

    const stores = openSqliteStores({ path, busyTimeoutMs: 1_000 })
    expect(stores.database.pragma('integrity_check', { simple: true })).toBe('ok')
    expect(
      stores.database.prepare(`SELECT count(*) FROM claims WHERE scope = 'uncommitted'`).pluck().get(),
    ).toBe(0)
    expect(await stores.claims.claim(claimInput('delivery-1', 1_010))).toEqual({
      kind: 'processing',
      leaseExpiresAt: 1_030,
    })
    const takeover = await stores.claims.claim(claimInput('delivery-1', 1_031))
    expect(takeover).toMatchObject({ kind: 'claimed', takeover: true })
    if (takeover.kind !== 'claimed') throw new Error('expected a takeover')
    expect(takeover.fence).not.toBe(fence)
    const ref = { namespace: 'webhook' as const, scope: 'sender-1', key: 'delivery-1' }
    expect(await stores.claims.complete({ ...ref, fence }, 1_032)).toBe(false)
    expect(await stores.claims.complete({ ...ref, fence: takeover.fence }, 1_032, 'done')).toBe(true)
    stores.close()
  })

  it('keeps every acknowledged claim of a process killed at a random moment', async () => {
    const path = join(directory, 'churn.db')
    const child = start('churn', path)
    const acknowledged: string[] = []
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'completed') acknowledged.push(message.key)
    })
    await next(child, 'completed')
    await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200))
    child.kill('SIGKILL')
    await exited(child)

    const stores = openSqliteStores({ path })
    expect(stores.database.pragma('integrity_check', { simple: true })).toBe('ok')
    expect(acknowledged.length).toBeGreaterThan(0)
    for (const key of acknowledged) {
      expect(await stores.claims.claim(claimInput(key, 2_000))).toEqual({ kind: 'completed', result: key })
    }
    stores.close()
  })
})
