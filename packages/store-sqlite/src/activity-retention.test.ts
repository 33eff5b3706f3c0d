/**
 * The sweep keeps webhook_activity 30 days (AdCP's retention for `webhook_activity[]`) and then deletes it; a
 * finished outbox entry, whose activity rows go with it, is kept as long. Pending entries are never swept.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ACTIVITY_RETENTION_SECONDS, type NewOutboxEntry } from '@adwire/webhooks'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqliteStores } from './index.js'

const directory = mkdtempSync(join(tmpdir(), 'adwire-store-sqlite-activity-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

const T0 = 1_000
const entry = (id: string): NewOutboxEntry => ({
  id,
  destination: 'registration-1',
  url: 'https://buyer.example/webhooks/1',
  idempotencyKey: `${id}-idempotency-key-000000`,
  body: '{"status":"working"}',
  headers: { 'content-type': 'application/json' },
  coalesceKey: null,
  createdAt: T0,
  nextAttemptAt: T0,
  deadlineAt: T0 + 86_400,
})

describe('SQLite outbox sweep', () => {
  it('keeps activity and finished entries 30 days, then deletes them; never a pending entry', async () => {
    const stores = openSqliteStores({ path: join(directory, 'activity.db') })
    try {
      const { outbox } = stores
      await outbox.enqueue(entry('delivered'))
      await outbox.enqueue(entry('pending'))
      const leased = await outbox.lease(T0, 10, 30)
      expect(leased.map((item) => item.id).sort()).toEqual(['delivered', 'pending'])
      for (const item of leased) {
        const outcome =
          item.id === 'delivered'
            ? ({ kind: 'delivered', httpStatus: 200 } as const)
            : ({
                kind: 'retry',
                nextAttemptAt: T0 + 90_000,
                httpStatus: 503,
                activityStatus: 'failed',
              } as const)
        expect(await outbox.record(item.id, item.fence, outcome, T0 + 1)).toBe(true)
      }
      expect(await outbox.activity('registration-1')).toHaveLength(2)
      // Past the deadline but within 30 days of the attempts: nothing goes.
      expect(await stores.sweep(T0 + ACTIVITY_RETENTION_SECONDS)).toMatchObject({ outbox: 0 })
      expect(await outbox.activity('registration-1')).toHaveLength(2)
      // 30 days after the deadline: the delivered entry and both activity rows (older than 30 days) go.
      expect(await stores.sweep(T0 + 86_400 + ACTIVITY_RETENTION_SECONDS)).toMatchObject({ outbox: 1 })
      expect(await outbox.activity('registration-1')).toEqual([])
      expect((await outbox.pending()).map((item) => item.id)).toEqual(['pending'])
    } finally {
      stores.close()
    }
  })
})
