import {
  dropSchema,
  freshSchemaName,
  queryOnce,
  resolveTestPostgresUrl,
} from '@adwire/vitest-config/postgres'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { StoreError } from './errors.js'
import { SCHEMA_VERSION } from './migrations.js'
import { openPostgresStores } from './open.js'

const url = await resolveTestPostgresUrl()

const claimInput = (key: string) =>
  ({
    namespace: 'webhook',
    scope: 'sender',
    key,
    fingerprint: 'a'.repeat(64),
    now: 1_000,
    leaseSeconds: 30,
    retentionSeconds: 86_400,
  }) as const

async function rejection(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  if (!StoreError.is(error)) throw new Error(`expected a StoreError, got ${String(error)}`)
  return error
}

describe('openPostgresStores options (no server needed)', () => {
  it.each(['', 'Adwire', 'adwire-test', 'pg_catalog', '1abc', 'a'.repeat(64), 'x"; DROP SCHEMA public; --'])(
    'refuses the schema name %j',
    async (schema) => {
      expect(
        (await rejection(openPostgresStores({ connectionString: 'postgres://127.0.0.1:1/none', schema })))
          .code,
      ).toBe('store_invalid_options')
    },
  )

  it('needs a connection string or a pool, and a positive pool size', async () => {
    expect((await rejection(openPostgresStores({}))).code).toBe('store_invalid_options')
    expect(
      (await rejection(openPostgresStores({ connectionString: 'postgres://x', maxConnections: 0 }))).code,
    ).toBe('store_invalid_options')
  })

  it.each([
    { isolation: 'SERIALIZABLE' },
    { isolation: 'snapshot' },
    { retry: { attempts: 0 } },
    { retry: { attempts: 1.5 } },
    { retry: { baseDelayMs: -1 } },
    { retry: { maxDelayMs: Number.POSITIVE_INFINITY } },
    { onRetry: 'log' },
  ])('refuses the transaction options %j with a message naming them', async (options) => {
    const error = await rejection(
      openPostgresStores({ connectionString: 'postgres://127.0.0.1:1/none', ...(options as object) }),
    )
    expect(error.code).toBe('store_invalid_options')
    expect(error.message).toMatch(/isolation|retry\.|onRetry/)
  })
})

if (!url) {
  describe.skip('openPostgresStores against PostgreSQL (ADWIRE_TEST_POSTGRES_URL unset or unreachable)', () => {
    it('needs a PostgreSQL server', () => {})
  })
} else {
  describe('openPostgresStores against PostgreSQL', () => {
    const schemas: string[] = []
    const fresh = () => {
      const schema = freshSchemaName()
      schemas.push(schema)
      return schema
    }
    afterAll(async () => {
      for (const schema of schemas) await dropSchema(url, schema)
    })

    it('migrates once when 5 openers race, and opening again changes nothing', async () => {
      const schema = fresh()
      const opened = await Promise.all(
        Array.from({ length: 5 }, () =>
          openPostgresStores({ connectionString: url, schema, maxConnections: 2 }),
        ),
      )
      const versions = await queryOnce<{ version: number }>(
        url,
        `SELECT version FROM "${schema}".schema_migrations ORDER BY version`,
      )
      expect(versions.map((row) => row.version)).toEqual(
        Array.from({ length: SCHEMA_VERSION }, (_, index) => index + 1),
      )
      expect((await opened[0]!.claims.claim(claimInput('k'))).kind).toBe('claimed')
      expect((await opened[4]!.claims.claim(claimInput('k'))).kind).toBe('processing')
      await Promise.all(opened.map((stores) => stores.close()))

      const again = await openPostgresStores({ connectionString: url, schema })
      expect((await again.claims.claim(claimInput('k'))).kind).toBe('processing')
      expect(await queryOnce(url, `SELECT version FROM "${schema}".schema_migrations`)).toHaveLength(
        SCHEMA_VERSION,
      )
      await again.close()
    })

    it('refuses a schema migrated by a newer release', async () => {
      const schema = fresh()
      await (await openPostgresStores({ connectionString: url, schema })).close()
      await queryOnce(
        url,
        `INSERT INTO "${schema}".schema_migrations (version, name) VALUES ($1, 'from the future')`,
        [SCHEMA_VERSION + 1],
      )
      const error = await rejection(openPostgresStores({ connectionString: url, schema }))
      expect(error.code).toBe('store_schema_newer')
      expect(error.message).toContain(`version ${SCHEMA_VERSION + 1}`)
    })

    it('keeps schemas apart, also on one shared pool', async () => {
      const pool = new pg.Pool({ connectionString: url, max: 2 })
      try {
        const left = await openPostgresStores({ pool, schema: fresh() })
        const right = await openPostgresStores({ pool, schema: fresh() })
        expect((await left.claims.claim(claimInput('same'))).kind).toBe('claimed')
        expect((await right.claims.claim(claimInput('same'))).kind).toBe('claimed')
        expect(await left.replay.remember('kid', 'n', 2_000, 10, 1_000)).toBe('stored')
        expect(await right.replay.seen('kid', 'n', 1_000)).toBe(false)
        // close() leaves a given pool open, and the closed stores refuse work.
        await left.close()
        expect((await rejection(left.claims.claim(claimInput('later')))).code).toBe('store_closed')
        expect((await right.claims.claim(claimInput('later'))).kind).toBe('claimed')
        await right.close()
        expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
      } finally {
        await pool.end()
      }
    })

    it('refuses a second outbox entry with the same id, leaving the first and its supersessions alone', async () => {
      const stores = await openPostgresStores({ connectionString: url, schema: fresh() })
      try {
        const entry = {
          id: 'entry-1',
          destination: 'registration',
          url: 'https://buyer.example/webhooks',
          idempotencyKey: 'idem-entry-1-xxxxxxxxxxx',
          body: '{}',
          headers: { 'content-type': 'application/json', 'x-b': '1', 'x-a': '2' },
          coalesceKey: 'media_buy:1',
          createdAt: 1_000,
          nextAttemptAt: 1_000,
          deadlineAt: 2_000,
        }
        await stores.outbox.enqueue({ ...entry, id: 'entry-0' })
        await stores.outbox.enqueue(entry)
        expect((await rejection(stores.outbox.enqueue({ ...entry, body: '{"v":2}' }))).code).toBe(
          'store_duplicate_entry',
        )
        const pending = await stores.outbox.pending()
        expect(pending.map((item) => [item.id, item.body])).toEqual([['entry-1', '{}']])
        // Headers come back as given, in order.
        expect(Object.keys(pending[0]!.headers)).toEqual(['content-type', 'x-b', 'x-a'])
      } finally {
        await stores.close()
      }
    })
  })
}
