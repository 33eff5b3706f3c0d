import { describe, expect, it } from 'vitest'
import { assertSchemaVersion, migratePostgres, migrateSqlite } from './index.js'

describe('assertSchemaVersion', () => {
  it('refuses tables a newer version migrated', () => {
    expect(() => assertSchemaVersion('receiver', '4', 3)).toThrow(
      'the receiver tables are at version 4; this receiver knows up to 3',
    )
    expect(() => assertSchemaVersion('receiver', undefined, 3)).not.toThrow()
    expect(() => assertSchemaVersion('receiver', 3, 3)).not.toThrow()
  })
})

describe('the migration helpers', () => {
  it("are the stores' own (tested in @adwire/store-sqlite and @adwire/store-postgres)", async () => {
    expect(migrateSqlite).toBe((await import('@adwire/store-sqlite')).migrateSqlite)
    expect(migratePostgres).toBe((await import('@adwire/store-postgres')).migratePostgres)
  })
})
