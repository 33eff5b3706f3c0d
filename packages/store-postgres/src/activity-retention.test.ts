/**
 * Retention of the outbox and webhook_activity. The fixture's times (1 000 s) lie before the partitions the
 * stores create for the clock they opened with, so its rows are in the default partitions, which the sweep
 * still deletes from row by row: webhook_activity rows once they are 30 days old (AdCP's retention for
 * `webhook_activity[]`), never sooner; pending entries stay. Partitions dropped whole: partitions.test.ts.
 */
import { dropSchema, freshSchemaName, resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { ACTIVITY_DESTINATION, seedActivity } from '@adwire/store-contract'
import { ACTIVITY_RETENTION_SECONDS } from '@adwire/webhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresStores, type PostgresStores } from './open.js'

const url = await resolveTestPostgresUrl()
const T0 = 1_000

describe.skipIf(!url)('PostgreSQL outbox sweep', () => {
  const schema = freshSchemaName()
  let stores: PostgresStores
  beforeAll(async () => {
    stores = await openPostgresStores({ connectionString: url!, schema })
  })
  afterAll(async () => {
    await stores?.close()
    await dropSchema(url!, schema)
  })

  it('keeps pending entries and deletes activity rows of the default partition after 30 days, never sooner', async () => {
    const { outbox } = stores
    await seedActivity(outbox, T0)
    // Past the deadline the delivered entry would go, but the sweep at T0 + 1 day creates the partition of its
    // deadline and moves both entries into it: it is dropped whole once the pending one is finished.
    expect(await stores.sweep(T0 + 86_400)).toMatchObject({ outbox: 0 })
    expect((await outbox.pending()).map((item) => item.id)).toEqual(['pending'])
    expect(await outbox.activity(ACTIVITY_DESTINATION)).toHaveLength(2)
    expect(await outbox.sweepActivity(T0 + ACTIVITY_RETENTION_SECONDS)).toBe(0)
    // 30 days after the attempts: both activity rows go; the pending entry stays.
    expect(await outbox.sweepActivity(T0 + 1 + ACTIVITY_RETENTION_SECONDS)).toBe(2)
    expect(await outbox.activity(ACTIVITY_DESTINATION)).toEqual([])
    expect((await outbox.pending()).map((item) => item.id)).toEqual(['pending'])
  })
})
