/**
 * The storage sweep prunes the webhook bookkeeping on the injected clock: report schedules of buys whose final
 * report was sent, fire-log entries older than the retention (WEBHOOK_ACTIVITY_RETENTION_DAYS, default 30),
 * on a real SQLite file and a real PostgreSQL schema; open schedules and recent fires stay. The running
 * service's periodic sweep does it too.
 */
import { join } from 'node:path'
import { dropSchema, freshSchemaName, resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, describe, expect, it } from 'vitest'
import {
  FIRE_KIND,
  recordFire,
  openPostgresStorage,
  openSqliteStorage,
  type Storage,
  SCHEDULE_KIND,
  type ReportSchedule,
  DEFAULT_FIRE_RETENTION_SECONDS,
  pruneWebhookRecords,
} from '@adwire/seller'
import { parseEnv } from '../env.js'
import { startTestAgent, tempDir } from '../test-support.js'

const DAY = 86_400
const NOW = 1_800_000_000
const url = await resolveTestPostgresUrl()
const schema = freshSchemaName('sales_retention')

afterAll(async () => {
  if (!url) return
  await dropSchema(url, schema)
})

/** Resolves once `check` holds (the sweep runs every 50 ms); fails after 20 s. */
async function until(check: () => Promise<boolean>) {
  for (const started = Date.now(); !(await check());) {
    if (Date.now() - started > 20_000) throw new Error('timed out waiting for the sweep')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const schedule = (id: string, closed: boolean): ReportSchedule => ({
  media_buy_id: id,
  sequence_number: 3,
  window_start: NOW - DAY,
  next_at: NOW + DAY,
  ...(closed ? { closed: true, closed_at: NOW - 60 } : {}),
})

async function seed(storage: Storage) {
  await storage.records.put(SCHEDULE_KIND, 'mb_open', 'buyer-1', schedule('mb_open', false))
  await storage.records.put(SCHEDULE_KIND, 'mb_done', 'buyer-1', schedule('mb_done', true))
  for (const [key, age] of [
    ['fire_old_0123456789', 31 * DAY],
    ['fire_edge_0123456789', 30 * DAY - 1],
    ['fire_new_0123456789', 60],
  ] as const)
    await recordFire(storage.records, 'buyer-1', {
      idempotency_key: key,
      destination: 'media_buy:mb_done',
      notification_type: 'scheduled',
      url: 'https://buyer.example/hooks',
      fired_at: NOW - age,
    })
}

async function expectPruned(storage: Storage) {
  await seed(storage)
  expect(await pruneWebhookRecords(storage.records, NOW, DEFAULT_FIRE_RETENTION_SECONDS)).toEqual({
    schedules: 1,
    fires: 1,
  })
  expect((await storage.records.list(SCHEDULE_KIND)).map((row) => row.id)).toEqual(['mb_open'])
  expect((await storage.records.list(FIRE_KIND)).map((row) => row.id).sort()).toEqual([
    'fire_edge_0123456789',
    'fire_new_0123456789',
  ])
  // A shorter retention, a day later: only the recent fire stays. Nothing left to prune prunes nothing.
  expect(await pruneWebhookRecords(storage.records, NOW + DAY, 7 * DAY)).toEqual({ schedules: 0, fires: 1 })
  expect(await pruneWebhookRecords(storage.records, NOW + DAY, 7 * DAY)).toEqual({ schedules: 0, fires: 0 })
  expect((await storage.records.list(FIRE_KIND)).map((row) => row.id)).toEqual(['fire_new_0123456789'])
}

describe('pruning the webhook bookkeeping', () => {
  it('on SQLite', async () => {
    const storage = openSqliteStorage(join(tempDir(), 'retention.sqlite'))
    try {
      await expectPruned(storage)
    } finally {
      await storage.close()
    }
  })

  it.skipIf(!url)('on PostgreSQL', async () => {
    const storage = await openPostgresStorage(url!, schema)
    try {
      await expectPruned(storage)
    } finally {
      await storage.close()
    }
  })

  it('in the running service: its sweep uses WEBHOOK_ACTIVITY_RETENTION_DAYS on the injected clock', async () => {
    expect(parseEnv({}).webhookActivityRetentionSeconds).toBe(30 * DAY)
    expect(() => parseEnv({ WEBHOOK_ACTIVITY_RETENTION_DAYS: '0' })).toThrow(
      /WEBHOOK_ACTIVITY_RETENTION_DAYS/,
    )
    let offset = 0
    const agent = await startTestAgent(
      { WEBHOOK_ACTIVITY_RETENTION_DAYS: '2' },
      { now: () => NOW + offset, sweepIntervalSeconds: 0.05, tickSeconds: 0 },
    )
    try {
      const records = agent.runtime.deps.storage.records
      await seed(agent.runtime.deps.storage)
      await until(async () => (await records.list(SCHEDULE_KIND)).length === 1)
      // Every fire is younger than 31 days; at two days' retention the 60-second one stays until the clock moves.
      await until(async () => (await records.list(FIRE_KIND)).length === 1)
      offset = 3 * DAY
      await until(async () => (await records.list(FIRE_KIND)).length === 0)
      expect((await records.list(SCHEDULE_KIND)).map((row) => row.id)).toEqual(['mb_open'])
    } finally {
      await agent.close()
    }
  })
})
