import { describe, expect, it } from 'vitest'
import { MemoryClaimStore, MemoryConvergenceStore } from './memory-stores.js'
import { createSweeper } from './sweeper.js'

describe('createSweeper', () => {
  it('deletes records past their retention, keeps the rest, and survives a failing target', async () => {
    const claims = new MemoryClaimStore()
    const convergence = new MemoryConvergenceStore()
    const input = { namespace: 'webhook' as const, scope: 's', fingerprint: 'f', leaseSeconds: 30 }
    await claims.claim({ ...input, key: 'old', now: 0, retentionSeconds: 100 })
    await claims.claim({ ...input, key: 'new', now: 150, retentionSeconds: 100 })
    const errors: unknown[] = []
    const failing = { sweep: () => Promise.reject(new Error('store down')) }
    let clock = 200
    const sweeper = createSweeper([failing, claims, convergence], {
      now: () => clock,
      onError: (error) => errors.push(error),
    })
    await sweeper.runOnce()
    expect(errors).toHaveLength(1)
    // The old key is gone (a new payload may claim it); the new one is still bound.
    expect(
      (await claims.claim({ ...input, key: 'old', fingerprint: 'g', now: clock, retentionSeconds: 100 }))
        .kind,
    ).toBe('claimed')
    expect(
      (await claims.claim({ ...input, key: 'new', fingerprint: 'g', now: clock, retentionSeconds: 100 }))
        .kind,
    ).toBe('conflict')
    clock = 1_000
    sweeper.start()
    sweeper.start()
    sweeper.stop()
  })
})
