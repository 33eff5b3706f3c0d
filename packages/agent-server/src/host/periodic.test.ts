/** The periodic loops of an agent process: never overlapping themselves, failures logged, a stop that waits. */
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { startLoops } from './index.js'

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
