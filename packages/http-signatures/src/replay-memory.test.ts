import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MemoryReplayStore } from './replay-memory.js'

describe('MemoryReplayStore', () => {
  it('remembers a nonce until it expires, per keyid', async () => {
    const store = new MemoryReplayStore()
    expect(await store.remember('k', 'n', 160, 10, 100)).toBe('stored')
    expect(await store.remember('k', 'n', 160, 10, 159)).toBe('replayed')
    expect(await store.seen('k', 'n', 159)).toBe(true)
    expect(await store.remember('other', 'n', 160, 10, 100)).toBe('stored')
    expect(await store.seen('k', 'n', 160)).toBe(false)
    expect(await store.remember('k', 'n', 220, 10, 160)).toBe('stored')
  })

  it('rejects at the per-keyid cap instead of evicting, until entries expire', async () => {
    const store = new MemoryReplayStore()
    store.fill('k', 3, 200)
    expect(await store.atCapacity('k', 3, 100)).toBe(true)
    expect(await store.atCapacity('k', 4, 100)).toBe(false)
    expect(await store.remember('k', 'fresh', 300, 3, 100)).toBe('capacity')
    expect(await store.atCapacity('k', 3, 200)).toBe(false)
    expect(await store.remember('k', 'fresh', 300, 3, 200)).toBe('stored')
  })

  it('enforces the aggregate cap', async () => {
    const store = new MemoryReplayStore({ maxEntries: 2 })
    expect(await store.remember('a', '1', 200, 10, 100)).toBe('stored')
    expect(await store.remember('b', '1', 200, 10, 100)).toBe('stored')
    expect(await store.remember('c', '1', 200, 10, 100)).toBe('capacity')
    expect(await store.remember('c', '1', 300, 10, 200)).toBe('stored')
    expect(await store.remember('c', '1', 300, 10, 250)).toBe('replayed')
  })

  it('counts exactly the live entries whatever the order of expiries', () => {
    fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 1, max: 50 }))),
        fc.integer({ min: 0, max: 60 }),
        async (entries, later) => {
          const store = new MemoryReplayStore()
          const live = new Map<string, number>()
          for (const [nonce, expiresAt] of entries) {
            const outcome = await store.remember('k', String(nonce), expiresAt, Infinity, 0)
            expect(outcome).toBe(live.has(String(nonce)) ? 'replayed' : 'stored')
            if (!live.has(String(nonce))) live.set(String(nonce), expiresAt)
          }
          const expected = [...live.values()].filter((expiresAt) => expiresAt > later).length
          expect(store.liveCount('k', later)).toBe(expected)
        },
      ),
    )
  })
})
