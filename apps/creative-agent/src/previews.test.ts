/**
 * The service preview store over the real Storage on a SQLite file: one write per task however many pages,
 * concurrent tasks coalesced, the later expiry kept, pages served by another store on the same file (another
 * instance), 410 for expired rows until the sweep deletes them, and a failed write failing the task's flush.
 */
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { StoredPreview } from './creative/preview-store.js'
import { createServicePreviewStore } from './previews.js'
import { openStorage, PREVIEW_TOMBSTONE_SECONDS, type PreviewRow, type Storage } from './storage.js'
import { tempDir } from './test-support.js'

const opened: Storage[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((storage) => storage.close()))
})

async function open(path = join(tempDir(), 'previews.sqlite')): Promise<{ storage: Storage; path: string }> {
  const storage = await openStorage({ kind: 'sqlite', path })
  opened.push(storage)
  return { storage, path }
}

/** The real storage, with the batches it was asked to write recorded. */
function recording(storage: Storage) {
  const writes: PreviewRow[][] = []
  return {
    writes,
    persistence: {
      putPreviews: (pages: readonly PreviewRow[]) => {
        writes.push([...pages])
        return storage.putPreviews(pages)
      },
      getPreview: (id: string) => storage.getPreview(id),
    },
  }
}

const id = (n: number) => `pv_${n.toString(16).padStart(32, '0')}`
const T0 = new Date('2030-01-01T00:00:00Z')
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000)
const page = (n: number, expiresAt = at(3600)): [string, StoredPreview] => [
  id(n),
  { html: `<p>page ${n}</p>`, expiresAt },
]

describe('the service preview store', () => {
  it('writes the pages of one task in one write, and coalesces concurrent tasks', async () => {
    const { storage } = await open()
    const { writes, persistence } = recording(storage)
    const store = createServicePreviewStore({ persistence })
    const batch = store.forTask()
    batch.putMany(Array.from({ length: 25 }, (_, n) => page(n)))
    await batch.flush()
    expect(writes.map((write) => write.length)).toEqual([25])
    expect(await storage.getPreview(id(24))).toEqual({
      id: id(24),
      html: '<p>page 24</p>',
      expiresAt: at(3600),
    })

    const tasks = Array.from({ length: 5 }, () => store.forTask())
    tasks.forEach((task, n) => task.putMany([page(100 + n)]))
    await Promise.all(tasks.map((task) => task.flush()))
    expect(writes.slice(1).map((write) => write.length)).toEqual([5])
  })

  it('keeps the later expiry of a page stored twice, in the database and for another instance', async () => {
    const { storage, path } = await open()
    const first = createServicePreviewStore({ persistence: storage })
    const later = first.forTask()
    later.putMany([page(1, at(7200))])
    await later.flush()
    const earlier = first.forTask()
    earlier.putMany([page(1, at(3600))])
    await earlier.flush()
    expect((await storage.getPreview(id(1)))?.expiresAt).toEqual(at(7200))

    const { storage: other } = await open(path)
    const second = createServicePreviewStore({ persistence: other })
    expect(await second.lookup(id(1), at(5000))).toEqual({
      state: 'live',
      preview: { html: '<p>page 1</p>', expiresAt: at(7200) },
    })
    expect(await second.lookup(id(2), at(0))).toEqual({ state: 'unknown' })
    expect(await second.lookup('not-an-id', at(0))).toEqual({ state: 'unknown' })
  })

  it('answers expired pages as expired until the sweep deletes their rows', async () => {
    const { storage } = await open()
    const store = createServicePreviewStore({ persistence: storage })
    const task = store.forTask()
    task.putMany([page(7)])
    await task.flush()
    expect((await store.lookup(id(7), at(10))).state).toBe('live')
    expect(await store.lookup(id(7), at(3601))).toEqual({ state: 'expired', expiredAt: at(3600) })

    await storage.sweep(at(3601).getTime() / 1000)
    expect(await storage.getPreview(id(7))).toEqual({ id: id(7), html: '', expiresAt: at(3600) })
    expect((await store.lookup(id(7), at(3700))).state).toBe('expired')

    await storage.sweep(at(3600 + PREVIEW_TOMBSTONE_SECONDS + 1).getTime() / 1000)
    expect(await storage.getPreview(id(7))).toBeUndefined()
    expect(await store.lookup(id(7), at(3700))).toEqual({ state: 'unknown' })
  })

  it('rejects the flush of a task whose write failed, and does not serve its pages from the cache', async () => {
    const { storage } = await open()
    const logged: Record<string, unknown>[] = []
    const store = createServicePreviewStore({ persistence: storage, log: (entry) => logged.push(entry) })
    await storage.close()
    const task = store.forTask()
    task.putMany([page(9)])
    await expect(task.flush()).rejects.toThrow()
    expect(task.get(id(9), at(0))).toBeUndefined()
    expect(logged).toEqual([expect.objectContaining({ previews: 'not stored', pages: 1 })])
    await expect(store.lookup(id(9), at(0))).rejects.toThrow()
    await store.idle()
  })
})
