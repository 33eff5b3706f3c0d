/** Opens the sales agent's storage on the configured database. */
import type { DatabaseConfig } from '../settings.js'
import { openPostgresStorage } from './postgres.js'
import { openSqliteStorage } from './sqlite.js'
import type { Storage } from './types.js'

export type * from './types.js'

/**
 * @example
 * const storage = await openStorage({ kind: 'sqlite', path: './data/sales-agent.sqlite' })
 */
export async function openStorage(config: DatabaseConfig): Promise<Storage> {
  return config.kind === 'sqlite'
    ? openSqliteStorage(config.path)
    : openPostgresStorage(config.connectionString, config.schema)
}
