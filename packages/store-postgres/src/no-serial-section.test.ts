/**
 * One seller across processes without a serial section (migration 4): while one transaction holds a seller's
 * nonce, claim and inbox decisions open (as a group of deliveries does until its commit), another pool whose
 * sessions give up on any lock wait after 2 s stores other nonces of the same keyid, claims other keys of the
 * same scope, decides an inbox group of that seller and sweeps its expired rows. Until migration 3 every one of
 * these waited on the seller's counter row (`replay_keyids`, `claim_scopes`) and failed here with a lock
 * timeout. The counters still equal the rows afterwards.
 */
import { inboxDelivery } from '@adwire/store-contract'
import {
  dropSchema,
  freshSchemaName,
  queryOnce,
  resolveTestPostgresUrl,
} from '@adwire/vitest-config/postgres'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresStores, type PostgresStores } from './open.js'

const url = await resolveTestPostgresUrl()

if (!url) {
  describe.skip('one seller without a serial section (ADWIRE_TEST_POSTGRES_URL unset or unreachable)', () => {
    it('needs a PostgreSQL server', () => {})
  })
} else {
  describe('one seller without a serial section', () => {
    const schema = freshSchemaName()
    let holder: PostgresStores
    let other: PostgresStores
    let impatient: pg.Pool

    beforeAll(async () => {
      // The generations count from the test's clock (migration 6), so that the sweep below is due to rotate.
      holder = await openPostgresStores({
        connectionString: url,
        schema,
        maxConnections: 2,
        now: () => 1_000,
      })
      impatient = new pg.Pool({ connectionString: url, max: 4, options: '-c lock_timeout=2000' })
      other = await openPostgresStores({ pool: impatient, schema, now: () => 1_000 })
    })
    afterAll(async () => {
      await other?.close()
      await impatient?.end()
      await holder?.close()
      await dropSchema(url, schema)
    })

    it("stores, claims, decides and sweeps a seller's other keys while one of its transactions is open", async () => {
      const seller = 'seller-held'
      const keyid = `kid-${seller}`
      const claim = (key: string, now: number, maxPerScope = 1_000) => ({
        namespace: 'webhook' as const,
        scope: seller,
        key,
        fingerprint: 'e'.repeat(64),
        now,
        leaseSeconds: 30,
        retentionSeconds: 100,
        maxPerScope,
      })
      // Rows that expire by 1_100, for the sweep below.
      for (let index = 0; index < 5; index += 1) {
        expect(await other.replay.remember(keyid, `old-${index}`, 1_050, 1_000, 1_000)).toBe('stored')
        expect(await other.claims.claim(claim(`old-${index}`, 1_000))).toMatchObject({ kind: 'claimed' })
      }

      let release!: () => void
      const released = new Promise<void>((resolve) => (release = resolve))
      let opened!: () => void
      const open = new Promise<void>((resolve) => (opened = resolve))
      const held = holder.transaction(async () => {
        expect(await holder.replay.remember(keyid, 'held', 1_400, 1_000, 1_100)).toBe('stored')
        expect(await holder.claims.claim(claim('held', 1_100))).toMatchObject({ kind: 'claimed' })
        opened()
        await released
      })
      await open
      try {
        for (let index = 0; index < 20; index += 1) {
          expect(await other.replay.remember(keyid, `n-${index}`, 1_400, 1_000, 1_100)).toBe('stored')
          expect(await other.claims.claim(claim(`k-${index}`, 1_100))).toMatchObject({ kind: 'claimed' })
        }
        const inbox = other.createInbox({ write: async () => {} })
        const outcomes = await Promise.all(
          Array.from({ length: 8 }, (_, index) =>
            inbox.accept(
              inboxDelivery(seller, `group-${index}`, {
                claim: { ...claim(`group-${index}`, 1_100), retentionSeconds: 86_400 },
              }),
            ),
          ),
        )
        expect(outcomes.map((outcome) => outcome.kind)).toEqual(Array(8).fill('published'))
        // The sweep is due to rotate the generations, which waits for the transactions deciding in the current
        // one: it gives up after its lock timeout (100 ms) and resolves, having dropped nothing.
        expect(await other.sweep(1_100 + 21_600)).toMatchObject({ claims: 0, replay: 0 })
      } finally {
        release()
        await held
      }
      // Once the transaction committed, the rotation goes through and the nonces' generation, all expired by
      // then, is dropped whole with its counters (the claims' one holds the group's live claims: it stays).
      const nonces = await queryOnce<{ count: number }>(
        url,
        `SELECT count(*)::int AS count FROM "${schema}".replay_nonces WHERE keyid = $1`,
        [keyid],
      )
      expect(await other.sweep(1_100 + 21_600)).toMatchObject({ claims: 0, replay: nonces[0]!.count })

      const drift = await queryOnce(
        url,
        `SELECT 'claims' AS what FROM "${schema}".claim_scope_counts s WHERE s.scope = $1
          HAVING sum(s.records) <> (SELECT count(*) FROM "${schema}".claims c WHERE c.scope = $1)
         UNION ALL
         SELECT 'replay' FROM "${schema}".replay_key_counts k WHERE k.keyid = $2
          HAVING sum(k.entries) <> (SELECT count(*) FROM "${schema}".replay_nonces n WHERE n.keyid = $2)`,
        [seller, keyid],
      )
      expect(drift).toEqual([])
      const held2 = await queryOnce<{ count: number }>(
        url,
        `SELECT count(*)::int AS count FROM "${schema}".claims WHERE scope = $1 AND key = 'held'`,
        [seller],
      )
      expect(held2).toEqual([{ count: 1 }])
    })

    it('refuses at the cap across stripes: a key filled by several connections is full for every one', async () => {
      const keyid = 'kid-striped'
      // Four connections of `other` and two of `holder` each hold a stripe; the cap counts them all.
      const handles = [holder, other]
      for (let index = 0; index < 30; index += 1) {
        expect(await handles[index % 2]!.replay.remember(keyid, `s-${index}`, 2_000, 30, 1_500)).toBe(
          'stored',
        )
      }
      expect(await holder.replay.remember(keyid, 'one-more', 2_000, 30, 1_500)).toBe('capacity')
      expect(await other.replay.remember(keyid, 'one-more', 2_000, 30, 1_500)).toBe('capacity')
      // Expired, they make room again without a sweep.
      expect(await other.replay.remember(keyid, 'later', 2_400, 30, 2_000)).toBe('stored')
    })
  })
}
