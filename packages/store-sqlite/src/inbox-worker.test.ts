/**
 * The inbox on a worker thread: the same decisions as the inbox on the caller's connection (a delivery's nonce,
 * claim and event in one transaction, acknowledged once durable), the event written by a writer module in the
 * worker, failures and a dying worker answered as errors, never as acknowledgements.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inboxDelivery } from '@adwire/store-contract'
import { WebhookError } from '@adwire/webhooks'
import { afterAll, describe, expect, it } from 'vitest'
import { createSqliteInboxWorker, openSqliteStores, StoreError } from './index.js'

const directory = mkdtempSync(join(tmpdir(), 'adwire-store-sqlite-inbox-worker-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))
const writer = new URL('./testing/inbox-writer-fixture.ts', import.meta.url)

const body = (text: string) => new TextEncoder().encode(text)
const delivery = (scope: string, key: string) => {
  const base = inboxDelivery(scope, key)
  return { ...base, event: { ...base.event, body: body(`{"key":"${key}"}`), payload: { key } } }
}

async function open(name: string, table = 'worker_events') {
  const path = join(directory, `${name}.db`)
  const stores = openSqliteStores({ path })
  const reports: unknown[] = []
  const inbox = await createSqliteInboxWorker({
    path,
    writer,
    writerData: { table },
    onReport: (report) => reports.push(report),
  })
  const rows = () =>
    stores.database.prepare(`SELECT key, body FROM ${table} ORDER BY key`).all() as Array<{
      key: string
      body: string
    }>
  return { path, stores, inbox, reports, rows }
}

describe('createSqliteInboxWorker', () => {
  it('publishes each delivery once, visible to another connection when acknowledged', async () => {
    const { stores, inbox, reports, rows } = await open('publish')
    try {
      const keys = Array.from({ length: 300 }, (_, index) => `key-${String(index).padStart(3, '0')}`)
      const seen = stores.database
        .prepare<[string], number>('SELECT count(*) FROM worker_events WHERE key = ?')
        .pluck()
      const outcomes = await Promise.all(
        keys.map((key) =>
          inbox.accept(delivery('seller', key)).then((outcome) => [outcome.kind, seen.get(key)] as const),
        ),
      )
      expect(outcomes).toEqual(keys.map(() => ['published', 1]))
      // The published event is the caller's own, with the decided flags; the writer got the body, not the payload.
      const again = delivery('seller', 'key-fresh')
      const published = await inbox.accept(again)
      expect(published).toEqual({
        kind: 'published',
        event: { ...again.event, takeover: false, reemission: false },
      })
      expect(rows().find((row) => row.key === 'key-fresh')?.body).toBe('{"key":"key-fresh"}')
      await new Promise((resolve) => setTimeout(resolve, 20))
      expect(reports).toContainEqual({ recorded: 'key-000', hasPayload: false })
      // A duplicate is answered from the committed claim; a replayed nonce is refused.
      expect(await inbox.accept(delivery('seller', 'key-000'))).toEqual({
        kind: 'claim',
        claim: { kind: 'completed', result: null },
      })
      const replay = delivery('seller', 'key-replay')
      await inbox.accept(replay)
      expect(await inbox.accept({ ...replay, claim: { ...replay.claim, key: 'key-other' } })).toEqual({
        kind: 'replayed',
      })
      expect(rows()).toHaveLength(302)
    } finally {
      await inbox.close()
      stores.close()
    }
  })

  it("rolls back only the delivery whose writer failed, and rejects it with the writer's error", async () => {
    const { stores, inbox, rows } = await open('failing')
    try {
      const results = await Promise.allSettled(
        ['a', 'b-bad', 'c'].map((key) => inbox.accept(delivery('failing', key))),
      )
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
      const reason = (results[1] as PromiseRejectedResult).reason
      expect(reason).toBeInstanceOf(WebhookError)
      expect((reason as WebhookError).code).toBe('webhook_publish_failed')
      expect(rows().map((row) => row.key)).toEqual(['a', 'c'])
      // Nothing of the failed delivery was kept: its retry is a first delivery.
      const retry = delivery('failing', 'b-bad')
      expect((await inbox.accept({ ...retry, event: { ...retry.event, idempotencyKey: 'b-ok' } })).kind).toBe(
        'published',
      )
    } finally {
      await inbox.close()
      stores.close()
    }
  })

  it('refuses what a dying worker held, keeps none of it, and starts a new worker for the next delivery', async () => {
    const { stores, inbox, rows } = await open('crash')
    try {
      expect((await inbox.accept(delivery('crash', 'before'))).kind).toBe('published')
      const results = await Promise.allSettled(
        ['x-1', 'x-2-crash', 'x-3'].map((key) => inbox.accept(delivery('crash', key))),
      )
      for (const result of results) {
        expect(result.status).toBe('rejected')
        const reason = (result as PromiseRejectedResult).reason
        expect(StoreError.is(reason) && reason.code).toBe('store_unavailable')
      }
      // The group died with its transaction: only the earlier delivery is on file.
      expect(rows().map((row) => row.key)).toEqual(['before'])
      // The senders' retries reach a new worker and are first deliveries.
      expect((await inbox.accept(delivery('crash', 'x-1'))).kind).toBe('published')
      expect((await inbox.accept(delivery('crash', 'x-3'))).kind).toBe('published')
      expect(rows().map((row) => row.key)).toEqual(['before', 'x-1', 'x-3'])
    } finally {
      await inbox.close()
      stores.close()
    }
  })

  it('close waits for the deliveries in flight, then refuses new ones', async () => {
    const { stores, inbox, rows } = await open('close')
    try {
      const pending = Array.from({ length: 50 }, (_, index) => inbox.accept(delivery('close', `k-${index}`)))
      await inbox.close()
      expect((await Promise.all(pending)).every((outcome) => outcome.kind === 'published')).toBe(true)
      expect(rows()).toHaveLength(50)
      await expect(inbox.accept(delivery('close', 'late'))).rejects.toMatchObject({ code: 'store_closed' })
    } finally {
      stores.close()
    }
  })

  it('refuses to start, with store_unavailable, when the writer module cannot be loaded', async () => {
    const path = join(directory, 'no-writer.db')
    openSqliteStores({ path }).close()
    const started = createSqliteInboxWorker({
      path,
      writer: new URL('./testing/missing-writer.ts', import.meta.url),
    })
    await expect(started).rejects.toThrow(/could not start: .*missing-writer/)
    await expect(started).rejects.toMatchObject({ code: 'store_unavailable' })
  })
})
