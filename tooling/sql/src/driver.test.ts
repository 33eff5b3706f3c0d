/** The driver on both databases: `?` placeholders, rows, tuples, changes, transactions that commit or roll back. */
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, describe, expect, it } from 'vitest'
import { placeholders, type SqlDriver } from './driver.js'
import { postgresSchema, sqliteFile } from './test-databases.js'

const postgresUrl = await resolveTestPostgresUrl()

function contract(name: string, open: () => Promise<SqlDriver>) {
  describe(`the driver on ${name}`, () => {
    it('binds ? values, reads rows and tuples, counts changes', async () => {
      const db = await open()
      try {
        await db.run('CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT, n INTEGER)')
        expect(
          await db.run('INSERT INTO notes (id, body, n) VALUES (?, ?, ?), (?, ?, ?)', [
            'a',
            'x',
            1,
            'b',
            null,
            2,
          ]),
        ).toBe(2)
        expect(await db.all('SELECT id, body FROM notes ORDER BY id')).toEqual([
          { id: 'a', body: 'x' },
          { id: 'b', body: null },
        ])
        expect(
          await db.tuples(`SELECT id, n FROM notes WHERE id IN (${placeholders(2)}) ORDER BY id`, ['a', 'b']),
        ).toEqual([
          ['a', 1],
          ['b', 2],
        ])
        expect(await db.one('SELECT id FROM notes WHERE n = ?', [3])).toBeUndefined()
      } finally {
        await db.close()
        await db.close()
      }
    })

    it('commits a transaction that resolves and rolls back one that throws', async () => {
      const db = await open()
      try {
        await db.run('CREATE TABLE counters (id TEXT PRIMARY KEY, n INTEGER NOT NULL)')
        await db.transaction(async (tx) => {
          await tx.run('INSERT INTO counters (id, n) VALUES (?, ?)', ['kept', 1])
        })
        await expect(
          db.transaction(async (tx) => {
            await tx.run('INSERT INTO counters (id, n) VALUES (?, ?)', ['undone', 1])
            throw new Error('no')
          }),
        ).rejects.toThrow('no')
        expect(await db.all('SELECT id FROM counters')).toEqual([{ id: 'kept' }])
      } finally {
        await db.close()
      }
    })
  })
}

contract('SQLite', async () => sqliteFile().open())

describe.skipIf(!postgresUrl)('PostgreSQL', async () => {
  const schema = postgresUrl ? await postgresSchema(postgresUrl) : undefined
  afterAll(() => schema?.drop())
  contract('PostgreSQL', async () => schema!.open())
})
