import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openSqliteStores, type SqliteStores } from './index.js'

const directory = mkdtempSync(join(tmpdir(), 'adwire-store-sqlite-capacity-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))
let stores: SqliteStores
let files = 0
beforeEach(() => {
  stores = openSqliteStores({ path: join(directory, `capacity-${(files += 1)}.db`) })
})
afterEach(() => stores.close())

const claim = (key: string, now: number, overrides: { retentionSeconds?: number; scope?: string } = {}) =>
  stores.claims.claim({
    namespace: 'webhook',
    scope: overrides.scope ?? 'sender-1',
    key,
    fingerprint: 'a'.repeat(64),
    now,
    leaseSeconds: 30,
    retentionSeconds: overrides.retentionSeconds ?? 100,
    maxPerScope: 3,
  })

/** The trigger-kept counters must always equal the rows they count. */
function expectCountersExact() {
  const all = (sql: string) => stores.database.prepare(sql).all()
  expect(all('SELECT namespace, scope, records FROM claim_scopes ORDER BY 1, 2')).toEqual(
    all('SELECT namespace, scope, count(*) AS records FROM claims GROUP BY 1, 2 ORDER BY 1, 2'),
  )
  expect(all('SELECT keyid, entries FROM replay_keyids ORDER BY 1')).toEqual(
    all('SELECT keyid, count(*) AS entries FROM replay_nonces GROUP BY 1 ORDER BY 1'),
  )
}

describe('capacity', () => {
  it('counts live claims only, with expired records not yet swept', async () => {
    expect((await claim('a', 1_000)).kind).toBe('claimed')
    expect((await claim('b', 1_000)).kind).toBe('claimed')
    expect((await claim('c', 1_050)).kind).toBe('claimed')
    expect(await claim('d', 1_060)).toEqual({ kind: 'capacity' })
    // a and b expired at 1100 (still stored): one live record, room for two.
    expect((await claim('d', 1_100)).kind).toBe('claimed')
    expect((await claim('a', 1_100)).kind).toBe('claimed') // replaces the expired record of the same key
    expect(await claim('e', 1_100)).toEqual({ kind: 'capacity' })
    expectCountersExact()
    expect((await stores.sweep(1_100)).claims).toBe(1)
    expectCountersExact()
    expect(await claim('e', 1_120)).toEqual({ kind: 'capacity' })
    expect((await claim('e', 1_150)).kind).toBe('claimed')
    expect((await claim('x', 1_150, { scope: 'sender-2' })).kind).toBe('claimed')
    expectCountersExact()
    await stores.sweep(10_000)
    expectCountersExact()
    expect(stores.database.prepare('SELECT count(*) FROM claim_scopes').pluck().get()).toBe(0)
  })

  it('counts live nonces only, and a re-stored expired nonce once', async () => {
    const { replay } = stores
    expect(await replay.remember('kid', 'n1', 1_100, 2, 1_000)).toBe('stored')
    expect(await replay.remember('kid', 'n2', 1_200, 2, 1_000)).toBe('stored')
    expect(await replay.atCapacity('kid', 2, 1_050)).toBe(true)
    expect(await replay.remember('kid', 'n3', 1_200, 2, 1_050)).toBe('capacity')
    expect(await replay.atCapacity('kid', 2, 1_100)).toBe(false)
    expect(await replay.remember('kid', 'n1', 1_300, 2, 1_100)).toBe('stored')
    expect(await replay.remember('kid', 'n3', 1_300, 2, 1_100)).toBe('capacity')
    expectCountersExact()
    expect((await stores.sweep(1_200)).replay).toBe(1)
    expectCountersExact()
    expect(await replay.remember('kid', 'n3', 1_300, 2, 1_200)).toBe('stored')
    expectCountersExact()
  })
})
