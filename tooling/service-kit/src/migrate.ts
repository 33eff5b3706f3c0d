/**
 * Migrations in one transaction: a service's tables migrate with `migrateSqlite` (@adwire/store-sqlite) or
 * `migratePostgres` (@adwire/store-postgres), both re-exported here; this file adds the check every service makes
 * of the version it finds.
 */

/**
 * Refuses tables that a newer version of the service migrated (`found` above `known`).
 *
 * @example
 * assertSchemaVersion('receiver', row?.value, 3)
 */
export function assertSchemaVersion(
  service: string,
  found: string | number | undefined,
  known: number,
): void {
  if (found !== undefined && Number(found) > known) {
    throw new Error(`the ${service} tables are at version ${found}; this ${service} knows up to ${known}`)
  }
}
