/**
 * Migration 6 on a registry that already holds data: a database migrated to version 5 and filled (brands,
 * a publisher with properties and an authorization, public and private member agents) is opened by this
 * registry, which adds the search index and backfills it; every entity is found, private agents are not. On
 * SQLite (a real file) and PostgreSQL (a fresh schema, dropped afterwards).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import type { DatabaseConfig } from '../env.js'
import { dropSchema } from '../testing/registry.js'
import { MIGRATIONS, MIGRATIONS_TABLE } from './migrations.js'
import { openRepository } from './repository.js'

const postgresUrl = await resolveTestPostgresUrl()
const folder = mkdtempSync(join(tmpdir(), 'adwire-registry-search-migration-'))
const schema = `registry_migration6_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`

afterAll(async () => {
  rmSync(folder, { recursive: true, force: true })
  if (postgresUrl) await dropSchema(postgresUrl, schema)
})

const AT = '2026-06-01T00:00:00.000Z'

/** Rows written by a version-5 registry (one statement each, `?` placeholders). */
const ROWS: Array<[string, Array<string | number>]> = [
  [
    `INSERT INTO registry_brands (domain, id, brand_name, source, names, verified, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 0, ?, ?)`,
    ['ocelot.test', 'b1', 'Ocelot Outfitters', 'community', '[{"en":"Ocelot"}]', AT, AT],
  ],
  [
    `INSERT INTO registry_publishers (domain, source, valid, created_at, updated_at) VALUES (?, ?, 1, ?, ?)`,
    ['pangolin-press.test', 'adagents_json', AT, AT],
  ],
  [
    `INSERT INTO registry_properties (publisher_domain, property_id, rid, property_type, name, identifiers, tags,
       source, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      'pangolin-press.test',
      'daily',
      'r1',
      'website',
      'Pangolin Daily',
      '[{"type":"domain","value":"daily.pangolin-press.test"}]',
      '["news"]',
      'adagents_json',
      AT,
      AT,
    ],
  ],
  [
    `INSERT INTO registry_authorizations (id, agent_url, agent_url_canonical, publisher_domain, property_id,
       evidence, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      'a1',
      'https://sales.tapir.test/mcp',
      'https://sales.tapir.test/mcp',
      'pangolin-press.test',
      '',
      'adagents_json',
      AT,
      AT,
    ],
  ],
  ...(['public', 'private'] as const).map((visibility, index): [string, Array<string | number>] => [
    `INSERT INTO registry_member_agents (org_id, url, url_canonical, name, type, visibility, position,
         created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      'org1',
      `https://${visibility}.quetzal.test/mcp`,
      `https://${visibility}.quetzal.test/mcp`,
      `Quetzal ${visibility}`,
      'creative',
      visibility,
      index,
      AT,
      AT,
    ],
  ]),
]

const VERSION_5 = MIGRATIONS.filter((migration) => migration.version <= 5)

async function fillVersion5(name: string): Promise<DatabaseConfig> {
  if (name === 'sqlite') {
    const path = join(folder, 'registry.sqlite')
    const db = new Database(path)
    db.exec(MIGRATIONS_TABLE)
    for (const migration of VERSION_5) {
      for (const statement of migration.statements) db.exec(statement)
      db.prepare('INSERT INTO registry_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        migration.version,
        migration.name,
        AT,
      )
    }
    for (const [sql, params] of ROWS) db.prepare(sql).run(...params)
    db.close()
    return { kind: 'sqlite', path }
  }
  const client = new pg.Client({ connectionString: postgresUrl! })
  await client.connect()
  try {
    await client.query(`CREATE SCHEMA "${schema}"`)
    await client.query(`SET search_path TO "${schema}"`)
    await client.query(MIGRATIONS_TABLE)
    for (const migration of VERSION_5) {
      for (const statement of migration.statements) await client.query(statement)
      await client.query('INSERT INTO registry_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
        migration.version,
        migration.name,
        AT,
      ])
    }
    for (const [sql, params] of ROWS) {
      let index = 0
      await client.query(
        sql.replace(/\?/g, () => `$${++index}`),
        params,
      )
    }
  } finally {
    await client.end()
  }
  return { kind: 'postgres', connectionString: postgresUrl!, schema }
}

describe.each([
  ['sqlite', true],
  ['postgres', Boolean(postgresUrl)],
] as const)('migration 6 over a filled version-5 database on %s', (name, available) => {
  it.skipIf(!available)(`backfills the search index from what is stored (${name})`, async () => {
    const config = await fillVersion5(name)
    const { repository } = await openRepository(config)
    try {
      const { search } = repository
      expect((await search.search('brands', ['ocelot'], 5, 0)).map((hit) => hit.domain)).toEqual([
        'ocelot.test',
      ])
      expect((await search.search('publishers', ['pangolin'], 5, 0)).map((hit) => hit.domain)).toEqual([
        'pangolin-press.test',
      ])
      expect((await search.search('properties', ['pangolin', 'dai'], 5, 0)).map((hit) => hit.name)).toEqual([
        'Pangolin Daily',
      ])
      expect((await search.search('agents', ['tapir'], 5, 0)).map((hit) => hit.url)).toEqual([
        'https://sales.tapir.test/mcp',
      ])
      expect((await search.search('agents', ['quetzal'], 5, 0)).map((hit) => hit.name)).toEqual([
        'Quetzal public',
      ])
      // And the triggers run from here on: a renamed brand is found by its new name only.
      await repository.driver.run('UPDATE registry_brands SET brand_name = ? WHERE domain = ?', [
        'Serval Supplies',
        'ocelot.test',
      ])
      expect(await search.search('brands', ['outfitters'], 5, 0)).toEqual([])
      expect((await search.search('brands', ['serval'], 5, 0)).map((hit) => hit.domain)).toEqual([
        'ocelot.test',
      ])
    } finally {
      await repository.close()
    }
  })
})
