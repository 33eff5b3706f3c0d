/** The periodic loops of an agent process: never overlapping themselves, failures logged, a stop that waits. */
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { every, startLoops } from './index.js'

/** A promise and the function that resolves it. */
function deferred() {
  let resolve!: () => void
  const promise = new Promise<void>((done) => (resolve = done))
  return { promise, resolve }
}

/** Resolves once `check()` holds (checked every 5 ms). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await sleep(5)
}

describe('startLoops', () => {
  it('never overlaps a run with itself, logs failures, and stop() waits for the run in flight', async () => {
    const release = deferred()
    let active = 0
    let most = 0
    let runs = 0
    let stopped = false
    const logged: Record<string, unknown>[] = []
    const loops = startLoops(
      [
        {
          name: 'slow',
          everyMs: 2,
          async run() {
            runs++
            most = Math.max(most, ++active)
            await release.promise
            active--
          },
        },
        { name: 'broken', everyMs: 2, run: () => Promise.reject(new Error('boom')) },
        { name: 'never', everyMs: 0, run: () => Promise.reject(new Error('ran')) },
      ],
      (entry) => logged.push(entry),
    )
    await until(() => runs === 1 && logged.length > 0)
    await sleep(30)
    const stopping = loops.stop().then(() => (stopped = true))
    await sleep(10)
    expect(stopped).toBe(false)
    release.resolve()
    await stopping
    expect([runs, most, active]).toEqual([1, 1, 0])
    expect(logged).toContainEqual({ broken: 'failed', error: 'Error: boom' })
    expect(logged.some((entry) => 'never' in entry)).toBe(false)
  })
})

describe('every', () => {
  it('skips ticks while a run is going, keeps running after a failure, and stop() waits for the run', async () => {
    let runs = 0
    let active = 0
    let most = 0
    const errors: unknown[] = []
    const gate = deferred()
    const task = every(
      async () => {
        runs++
        most = Math.max(most, ++active)
        try {
          if (runs === 1) throw new Error('first fails')
          if (runs === 2) await gate.promise
        } finally {
          active--
        }
      },
      2,
      (error) => errors.push(error),
    )
    await until(() => runs === 2)
    await sleep(20)
    expect(runs).toBe(2)
    let stopped = false
    const stopping = task.stop().then(() => (stopped = true))
    await sleep(10)
    expect(stopped).toBe(false)
    gate.resolve()
    await stopping
    await sleep(10)
    expect([runs, most, active]).toEqual([2, 1, 0])
    expect(String(errors[0])).toBe('Error: first fails')
    expect(errors).toHaveLength(1)
  })

  it('never runs with an interval of 0 or less, and a synchronous throw is a failure like any other', async () => {
    let runs = 0
    await every(async () => void runs++, 0).stop()
    const errors: unknown[] = []
    const throwing = every(
      () => {
        throw new Error('sync')
      },
      2,
      (error) => errors.push(error),
    )
    await until(() => errors.length > 1)
    await throwing.stop()
    expect(runs).toBe(0)
    expect(String(errors[0])).toBe('Error: sync')
  })
})
