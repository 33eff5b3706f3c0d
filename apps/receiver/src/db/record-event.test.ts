/**
 * recordEvent on both dialects: a takeover finds the earlier owner's row and writes nothing (the same
 * publication), while the same key published again without a takeover is counted as a second publication.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { openStorage, type Storage } from './open.js'
import type { NewEvent } from './types.js'

const postgresUrl = await resolveTestPostgresUrl()
const schema = `adwire_rec_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`

const event = (key: string, extra: Partial<NewEvent> = {}): NewEvent => ({
  registrationId: 'reg_1',
  sender: 'rfc9421:https://seller.example.com',
  idempotencyKey: key,
  operationId: 'op_1',
  status: 'completed',
  terminal: true,
  receivedAt: 1_776_520_800,
  payload: '{"idempotency_key":"k"}',
  forward: true,
  ...extra,
})

function contract(name: string, open: () => Promise<Storage>) {
  describe(`recordEvent on ${name}`, () => {
    it('stores a takeover of an already stored event once, and counts a plain second publication', async () => {
      const storage = await open()
      try {
        const first = await storage.db.recordEvent(event('k1'))
        expect(first).toMatchObject({ publications: 1, recovered: false })

        const recovered = await storage.db.recordEvent(
          event('k1', { takeover: true, receivedAt: 1_776_520_900 }),
        )
        expect(recovered).toEqual({ seq: first.seq, publications: 1, recovered: true })

        // A takeover of an event nobody stored (the owner died before publishing) stores it.
        const fresh = await storage.db.recordEvent(event('k2', { takeover: true }))
        expect(fresh).toMatchObject({ publications: 1, recovered: false })
        expect(fresh.seq).toBeGreaterThan(first.seq)

        // Without a takeover, the same key again is a real second publication: counted, never hidden.
        expect(await storage.db.recordEvent(event('k1'))).toEqual({
          seq: first.seq,
          publications: 2,
          recovered: false,
        })
        const listed = await storage.db.listEvents('reg_1', 10)
        expect(listed.map((row) => [row.idempotencyKey, row.publications, row.receivedAt])).toEqual([
          ['k1', 2, 1_776_520_800],
          ['k2', 1, 1_776_520_800],
        ])
        expect(await storage.db.pendingForwards()).toBe(2)
      } finally {
        await storage.close()
      }
    })

    it('records a group at once as one by one would: new rows in order, repeats counted, takeovers recovered', async () => {
      const storage = await open()
      try {
        const pending = await storage.db.pendingForwards()
        const first = await storage.db.recordEvent(event('g1', { registrationId: 'reg_g' }))
        const recorded = await storage.db.recordEvents([
          event('g2', { registrationId: 'reg_g', operationId: 'op_2', status: 'working', terminal: false }),
          event('g1', { registrationId: 'reg_g', takeover: true }),
          event('g3', { registrationId: 'reg_g', forward: false }),
          event('g1', { registrationId: 'reg_h' }),
        ])
        expect(recorded.map((row) => [row.publications, row.recovered])).toEqual([
          [1, false],
          [1, true],
          [1, false],
          [1, false],
        ])
        expect(recorded[1]!.seq).toBe(first.seq)
        expect(recorded[0]!.seq).toBeGreaterThan(first.seq)
        expect(recorded[2]!.seq).toBeGreaterThan(recorded[0]!.seq)
        // A key stored before, again without a takeover: a second publication, counted.
        const again = await storage.db.recordEvents([event('g2', { registrationId: 'reg_g' })])
        expect(again).toEqual([{ seq: recorded[0]!.seq, publications: 2, recovered: false }])
        const listed = await storage.db.listEvents('reg_g', 10)
        expect(
          listed.map((row) => [row.idempotencyKey, row.publications, row.operationId, row.status]),
        ).toEqual([
          ['g1', 1, 'op_1', 'completed'],
          ['g2', 2, 'op_2', 'working'],
          ['g3', 1, 'op_1', 'completed'],
        ])
        // g1 of reg_g and g1 of reg_h were to be forwarded, g3 not.
        expect((await storage.db.pendingForwards()) - pending).toBe(3)
        expect(await storage.db.recordEvents([])).toEqual([])
      } finally {
        await storage.close()
      }
    })
  })
}

contract('SQLite', () =>
  openStorage({
    kind: 'sqlite',
    path: path.join(mkdtempSync(path.join(tmpdir(), 'adwire-rec-')), 'r.sqlite'),
  }),
)

describe.skipIf(!postgresUrl)('PostgreSQL', () => {
  afterAll(async () => {
    const client = new pg.Client({ connectionString: postgresUrl! })
    await client.connect()
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await client.end()
  })
  contract('PostgreSQL', () => openStorage({ kind: 'postgres', connectionString: postgresUrl!, schema }))
})
