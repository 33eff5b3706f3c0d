/**
 * The sweep deletes finished outbox entries past their deadline (as before) and webhook_activity rows once
 * they are 30 days old (AdCP's retention for `webhook_activity[]`), never sooner; pending entries stay.
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

  it('deletes finished entries at their deadline and activity rows after 30 days; never a pending entry', async () => {
    const { outbox } = stores
    await seedActivity(outbox, T0)
    // Past the deadline: the delivered entry goes, its activity stays (30 days from the attempt).
    expect(await stores.sweep(T0 + 86_400)).toMatchObject({ outbox: 1 })
    expect(await outbox.activity(ACTIVITY_DESTINATION)).toHaveLength(2)
    expect(await outbox.sweepActivity(T0 + ACTIVITY_RETENTION_SECONDS)).toBe(0)
    // 30 days after the attempts: both activity rows go; the pending entry stays.
    expect(await outbox.sweepActivity(T0 + 1 + ACTIVITY_RETENTION_SECONDS)).toBe(2)
    expect(await outbox.activity(ACTIVITY_DESTINATION)).toEqual([])
    expect((await outbox.pending()).map((item) => item.id)).toEqual(['pending'])
  })
})
