/**
 * The sweep keeps webhook_activity 30 days (AdCP's retention for `webhook_activity[]`) and then deletes it; a
 * finished outbox entry, whose activity rows go with it, is kept as long. Pending entries are never swept.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ACTIVITY_DESTINATION, seedActivity } from '@adwire/store-contract'
import { ACTIVITY_RETENTION_SECONDS } from '@adwire/webhooks'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqliteStores } from './index.js'

const directory = mkdtempSync(join(tmpdir(), 'adwire-store-sqlite-activity-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

const T0 = 1_000

describe('SQLite outbox sweep', () => {
  it('keeps activity and finished entries 30 days, then deletes them; never a pending entry', async () => {
    const stores = openSqliteStores({ path: join(directory, 'activity.db') })
    try {
      const { outbox } = stores
      await seedActivity(outbox, T0)
      // Past the deadline but within 30 days of the attempts: nothing goes.
      expect(await stores.sweep(T0 + ACTIVITY_RETENTION_SECONDS)).toMatchObject({ outbox: 0 })
      expect(await outbox.activity(ACTIVITY_DESTINATION)).toHaveLength(2)
      // 30 days after the deadline: the delivered entry and both activity rows (older than 30 days) go.
      expect(await stores.sweep(T0 + 86_400 + ACTIVITY_RETENTION_SECONDS)).toMatchObject({ outbox: 1 })
      expect(await outbox.activity(ACTIVITY_DESTINATION)).toEqual([])
      expect((await outbox.pending()).map((item) => item.id)).toEqual(['pending'])
    } finally {
      stores.close()
    }
  })
})
