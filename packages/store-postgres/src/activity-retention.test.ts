/**
 * The sweep deletes finished outbox entries past their deadline (as before) and webhook_activity rows once
 * they are 30 days old (AdCP's retention for `webhook_activity[]`), never sooner; pending entries stay.
 */
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { ACTIVITY_RETENTION_SECONDS, type NewOutboxEntry } from '@adwire/webhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresStores, type PostgresStores } from './open.js'
import { dropSchema, freshSchemaName } from './testing/schemas.js'

const url = await resolveTestPostgresUrl()
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
    // Past the deadline: the delivered entry goes, its activity stays (30 days from the attempt).
    expect(await stores.sweep(T0 + 86_400)).toMatchObject({ outbox: 1 })
    expect(await outbox.activity('registration-1')).toHaveLength(2)
    expect(await outbox.sweepActivity(T0 + ACTIVITY_RETENTION_SECONDS)).toBe(0)
    // 30 days after the attempts: both activity rows go; the pending entry stays.
    expect(await outbox.sweepActivity(T0 + 1 + ACTIVITY_RETENTION_SECONDS)).toBe(2)
    expect(await outbox.activity('registration-1')).toEqual([])
    expect((await outbox.pending()).map((item) => item.id)).toEqual(['pending'])
  })
})
