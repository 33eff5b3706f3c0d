/**
 * Step 9a on PostgreSQL answers from memory well below the cap: after a read finding `entries`, the next
 * (cap - entries) / 2 checks of the keyid within a second need no statement; near the cap every check reads.
 * Another process filling the keyid is seen once that budget is spent, and step 13 (`remember`) stays exact.
 */
import { dropSchema, freshSchemaName, resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresStores, type PostgresStores } from './open.js'

const url = await resolveTestPostgresUrl()

describe.skipIf(!url)('PostgreSQL replay store: step 9a from memory', () => {
  const schema = freshSchemaName()
  let one: PostgresStores
  let other: PostgresStores
  beforeAll(async () => {
    one = await openPostgresStores({ connectionString: url!, schema })
    other = await openPostgresStores({ connectionString: url!, schema })
  })
  afterAll(async () => {
    await one?.close()
    await other?.close()
    await dropSchema(url!, schema)
  })

  it('reads once for half the room, then again; sees another process fill the keyid once the budget is spent', async () => {
    const keyid = `memo-${crypto.randomUUID()}`
    const cap = 10
    const now = 1_000
    let reads = 0
    const run = one.pool.query.bind(one.pool)
    // Count the statements `one` sends for step 9a.
    one.pool.query = ((...args: Parameters<typeof run>) => {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text
      if (text?.includes('at_capacity')) reads += 1
      return run(...args)
    }) as typeof run
    expect(await one.replay.atCapacity(keyid, cap, now)).toBe(false)
    expect(reads).toBe(1)
    // (10 - 0) / 2 = 5 checks from memory.
    for (let check = 0; check < 5; check += 1)
      expect(await one.replay.atCapacity(keyid, cap, now)).toBe(false)
    expect(reads).toBe(1)
    // Another process fills the keyid to its cap meanwhile: step 13 there is exact.
    for (let index = 0; index < cap; index += 1)
      expect(await other.replay.remember(keyid, `n-${index}`, now + 360, cap, now)).toBe('stored')
    expect(await other.replay.remember(keyid, 'n-over', now + 360, cap, now)).toBe('capacity')
    // The budget spent, the next check reads and refuses; at the cap every check reads.
    expect(await one.replay.atCapacity(keyid, cap, now)).toBe(true)
    expect(await one.replay.atCapacity(keyid, cap, now)).toBe(true)
    expect(reads).toBe(3)
  })
})
