import pg from 'pg'
import { beforeAll, describe, expect, it } from 'vitest'
import { resolveTestPostgresUrl } from './postgres.js'

const url = await resolveTestPostgresUrl()

describe.skipIf(!url)('PostgreSQL smoke test', () => {
  /** @type {pg.Client} */
  let client
  beforeAll(async () => {
    client = new pg.Client({ connectionString: url })
    await client.connect()
    return () => client.end()
  })

  it('connects and runs a query over a real connection', async () => {
    const result = await client.query('select 6 * 7 as answer, current_database() as database')
    expect(result.rows[0].answer).toBe(42)
    expect(typeof result.rows[0].database).toBe('string')
  })

  it('round-trips a row through a temporary table', async () => {
    await client.query('create temporary table adwire_smoke (key text primary key, value jsonb not null)')
    await client.query('insert into adwire_smoke values ($1, $2)', ['k', { ok: true }])
    const result = await client.query('select value from adwire_smoke where key = $1', ['k'])
    expect(result.rows).toEqual([{ value: { ok: true } }])
  })
})
