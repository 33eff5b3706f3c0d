/**
 * The registry's one repository interface. `openRepository` gives the same implementation on SQLite and on
 * PostgreSQL (the SQL is written once against {@link SqlDriver}); the storage test suite runs on both.
 */
import type BetterSqlite3 from 'better-sqlite3'
import type pg from 'pg'
import type { DatabaseConfig } from '../env.js'
import { authorizationStore, type AuthorizationStore } from './authorizations.js'
import { brandStore, type BrandStore } from './brands.js'
import { catalogStore, type CatalogStore } from './catalog.js'
import { discoveryStore, type DiscoveryStore } from './discovery.js'
import type { SqlDriver } from '@adwire/sql'
import { feedStore, type FeedStore } from './feed.js'
import { hostingStore, type HostingStore } from './hosting.js'
import { memberStore, type MemberStore } from './members.js'
import { mirrorStore, type MirrorStore } from './mirrors.js'
import { policyStore, type PolicyStore } from './policies.js'
import { openPostgres } from './postgres.js'
import { ownerStore, type OwnerStore } from './owners.js'
import { publisherStore, type PublisherStore } from './publishers.js'
import { requestStore, type RequestStore } from './requests.js'
import { searchStore, type SearchStore } from './search.js'
import { openSqlite } from './sqlite.js'

export interface RegistryRepository {
  readonly brands: BrandStore
  readonly publishers: PublisherStore
  readonly authorizations: AuthorizationStore
  readonly feed: FeedStore
  readonly members: MemberStore
  readonly requests: RequestStore
  readonly hosting: HostingStore
  /** Community mirrors, their proposals and the registry's moderators. */
  readonly mirrors: MirrorStore
  /** The governance policy registry. */
  readonly policies: PolicyStore
  /** The property catalog (identifier → property handle facts) and its disputes. */
  readonly catalog: CatalogStore
  /** Cross-entity full-text search (migration 6). */
  readonly search: SearchStore
  /** Brand crawl and manager re-validation requests (migration 6). */
  readonly discovery: DiscoveryStore
  /** Owners of community properties and proven controllers of agent URLs (migration 10). */
  readonly owners: OwnerStore
  /** The driver, for the few callers that need the dialect (bench, tests). */
  readonly driver: SqlDriver
  close(): Promise<void>
}

/** The underlying connection, handed to the auth module so its tables live beside the registry's. */
export type RawConnection =
  | { readonly kind: 'sqlite'; readonly db: BetterSqlite3.Database }
  | { readonly kind: 'postgres'; readonly pool: pg.Pool; readonly schema: string }

/** The repository over an open driver. */
export function createRepository(driver: SqlDriver): RegistryRepository {
  return {
    brands: brandStore(driver),
    publishers: publisherStore(driver),
    authorizations: authorizationStore(driver),
    feed: feedStore(driver),
    members: memberStore(driver),
    requests: requestStore(driver),
    hosting: hostingStore(driver),
    mirrors: mirrorStore(driver),
    policies: policyStore(driver),
    catalog: catalogStore(driver),
    search: searchStore(driver),
    discovery: discoveryStore(driver),
    owners: ownerStore(driver),
    driver,
    close: () => driver.close(),
  }
}

/**
 * Opens and migrates the configured database.
 *
 * @example
 * const { repository } = await openRepository({ kind: 'sqlite', path: './data/registry.sqlite' })
 * await repository.brands.getBrand('acme.example')
 * await repository.close()
 */
export async function openRepository(
  config: DatabaseConfig,
): Promise<{ repository: RegistryRepository; connection: RawConnection }> {
  if (config.kind === 'sqlite') {
    const { driver, db } = openSqlite(config.path)
    return { repository: createRepository(driver), connection: { kind: 'sqlite', db } }
  }
  const { driver, pool } = await openPostgres(config.connectionString, config.schema)
  return {
    repository: createRepository(driver),
    connection: { kind: 'postgres', pool, schema: config.schema },
  }
}
