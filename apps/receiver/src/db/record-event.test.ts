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
