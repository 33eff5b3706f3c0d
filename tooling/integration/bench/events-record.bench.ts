/**
 * What writing a published event costs the reference receiver on PostgreSQL since `receiver_events` is
 * partitioned by day (schema version 4): `receiver_events_record` (advisory locks on the keys, a lookup of the
 * keys in every partition, the INSERT), against the statement of version 3 (a multi-row `INSERT … ON CONFLICT`
 * on a plain table unique on the key), in one session with `synchronous_commit` off (the database's CPU, not
 * the commit's flush), groups of 50 and single events, at 4 partitions (a fresh table) and at 33 (30 days of
 * retention, 2,000 rows a day). Medians of 5 interleaved rounds; compare the ratio, not the microseconds.
 *
 *   node --import tsx bench/events-record.bench.ts   (after `pnpm build`; needs ADWIRE_TEST_POSTGRES_URL)
 */
import { openStorage } from '@adwire/app-receiver'
import pg from 'pg'
import { dropSchema, freshSchema } from '../src/receiver-support.js'

const url = process.env.ADWIRE_TEST_POSTGRES_URL
if (!url) {
  console.log('\nEvents record bench skipped: set ADWIRE_TEST_POSTGRES_URL')
  process.exit(0)
}
const DAY = 86_400
const ROWS_A_DAY = 2_000
const payload = JSON.stringify({ message: 'x'.repeat(500) })

async function measure(days: number): Promise<void> {
  const schema = freshSchema('adwire_bench_record')
  const s = `"${schema}"`
  const now = Date.now() / 1000
  // Day-wide partitions, as this bench builds its own (a retention of four days gives them; the default 30
  // days gives week-wide ones, which would overlap the days created below).
  const storage = await openStorage(
    { kind: 'postgres', connectionString: url!, schema },
    { now: () => now, eventRetentionSeconds: 4 * DAY },
  )
  await storage.close()
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const start = Math.floor(now / DAY) * DAY
    for (let day = 1; day <= days; day += 1) {
      const from = start - day * DAY
      await client.query(
        `CREATE TABLE ${s}.receiver_events_p${from} PARTITION OF ${s}.receiver_events FOR VALUES FROM (${from}) TO (${from + DAY})`,
      )
      await client.query(
        `INSERT INTO ${s}.receiver_events (registration_id, idempotency_key, sender, terminal, received_at, payload, forward_state)
         SELECT 'reg_' || (i % 4), 'old_' || $1 || '_' || i, 's', false, $2, $3, 'done' FROM generate_series(1, ${ROWS_A_DAY}) i`,
        [day, from + 10, payload],
      )
    }
    // Version 3's table, as many rows.
    await client.query(`CREATE TABLE ${s}.v3_events (LIKE ${s}.receiver_events INCLUDING DEFAULTS)`)
    await client.query(
      `ALTER TABLE ${s}.v3_events ADD PRIMARY KEY (seq), ADD UNIQUE (registration_id, idempotency_key)`,
    )
    await client.query(`CREATE INDEX ON ${s}.v3_events (registration_id, seq)`)
    await client.query(`CREATE INDEX ON ${s}.v3_events (forward_next_at) WHERE forward_state = 'pending'`)
    await client.query(
      `INSERT INTO ${s}.v3_events (seq, registration_id, idempotency_key, sender, terminal, received_at, payload, forward_state)
       SELECT i, 'reg_' || (i % 4), 'old_' || i, 's', false, 1, $1, 'done' FROM generate_series(1, ${days * ROWS_A_DAY}) i`,
      [payload],
    )
    await client.query(`ANALYZE ${s}.receiver_events`)
    await client.query(`ANALYZE ${s}.v3_events`)
    await client.query('SET synchronous_commit = off')

    let seq = 10_000_000
    const v3 = (keys: string[]) => {
      const values: unknown[] = []
      const rows = keys.map((key, index) => {
        values.push('reg_0', key, now, payload, seq++)
        const b = index * 5
        return `($${b + 1}, $${b + 2}, 's', false, $${b + 3}, $${b + 4}, 1, 'pending', $${b + 3}, $${b + 5})`
      })
      return client.query(
        `INSERT INTO ${s}.v3_events (registration_id, idempotency_key, sender, terminal, received_at, payload,
           publications, forward_state, forward_next_at, seq) VALUES ${rows.join(', ')}
         ON CONFLICT (registration_id, idempotency_key) DO UPDATE SET publications = v3_events.publications + 1
         RETURNING seq, publications`,
        values,
      )
    }
    const v4 = (keys: string[]) =>
      client.query(`SELECT * FROM ${s}.receiver_events_record($1::json)`, [
        JSON.stringify(
          keys.map((key, n) => ({
            n,
            registration_id: 'reg_0',
            idempotency_key: key,
            sender: 's',
            terminal: false,
            received_at: now,
            payload,
            forward: true,
            takeover: false,
          })),
        ),
      ])
    const results = new Map<string, number[]>()
    let unique = 0
    const time = async (
      label: string,
      size: number,
      calls: number,
      write: (keys: string[]) => Promise<unknown>,
    ) => {
      const began = performance.now()
      for (let call = 0; call < calls; call += 1)
        await write(Array.from({ length: size }, () => `k_${unique++}`))
      const perEvent = ((performance.now() - began) * 1000) / (calls * size)
      results.set(label, [...(results.get(label) ?? []), perEvent])
    }
    for (let warm = 0; warm < 2; warm += 1) {
      await time('warm', 50, 5, v3)
      await time('warm', 50, 5, v4)
      await time('warm', 1, 5, v3)
      await time('warm', 1, 5, v4)
    }
    for (let round = 0; round < 5; round += 1) {
      await time('v3 group', 50, 30, v3)
      await time('v4 group', 50, 30, v4)
      await time('v3 single', 1, 200, v3)
      await time('v4 single', 1, 200, v4)
    }
    const median = (label: string) => {
      const sorted = [...results.get(label)!].sort((a, b) => a - b)
      return sorted[Math.floor(sorted.length / 2)]!
    }
    for (const kind of ['group', 'single']) {
      const before = median(`v3 ${kind}`)
      const after = median(`v4 ${kind}`)
      console.log(
        `[record receiver_events] ${days + 3} partitions (${days * ROWS_A_DAY} rows), ${kind === 'group' ? 'groups of 50' : 'single events'}: ` +
          `${after.toFixed(0)} µs an event against ${before.toFixed(0)} for version 3's INSERT … ON CONFLICT (${(after / before).toFixed(2)}x)`,
      )
    }
  } finally {
    await client.end()
    await dropSchema(url!, schema)
  }
}

await measure(1)
await measure(30)
