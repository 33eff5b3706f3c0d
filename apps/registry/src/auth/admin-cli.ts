/**
 * The registry's admin entry (`pnpm --filter @adwire/app-registry admin …`, the app's `admin` script):
 * administration commands that write straight into the registry's database, so they run where the registry's
 * database is reachable (the same `DATABASE_URL` and `DATABASE_SCHEMA` as the service). Built to
 * `dist/auth/admin-cli.js`; relative SQLite paths resolve from apps/registry, as for `pnpm start:registry`.
 *
 *   create-org --name NAME [--json]   create an organization and print its API key once
 *   grant-moderator --org ORG_ID      make an organization's members community-mirror moderators
 *   revoke-moderator --org ORG_ID     take that back
 */
import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import Database from 'better-sqlite3'
import pg from 'pg'
import { openRepository } from '../db/repository.js'
import { parseEnv, type DatabaseConfig } from '../env.js'
import { authDb, migrateAuthPostgres, migrateAuthSqlite } from './db.js'
import { createOrg } from './identities.js'

const USAGE = `usage: pnpm --filter @adwire/app-registry admin create-org --name NAME [--json]
       pnpm --filter @adwire/app-registry admin grant-moderator --org ORG_ID
       pnpm --filter @adwire/app-registry admin revoke-moderator --org ORG_ID

create-org creates an organization in the registry's database and prints its API key once.
grant-moderator makes the organization's members moderators of community mirrors (they review proposals,
publish and delete mirrors); revoke-moderator takes that back.
Environment: DATABASE_URL (sqlite:PATH or postgres://…, default sqlite:./data/registry.sqlite),
             DATABASE_SCHEMA (PostgreSQL schema, default adwire_registry).`

/** Where the admin commands write: the service's own database settings, read by its `parseEnv`. */
export type AdminDatabase = DatabaseConfig

/** Reads `DATABASE_URL` and `DATABASE_SCHEMA` exactly as the service does; throws a readable error. */
export function adminDatabase(env: Readonly<Record<string, string | undefined>>): AdminDatabase {
  return parseEnv(env).database
}

export interface AdminIo {
  out(line: string): void
  err(line: string): void
}

/**
 * Runs one admin command; resolves to the process exit code (0 ok, 1 failure, 2 usage error).
 * @example
 * await runAdmin(['create-org', '--name', 'Acme'], process.env, { out: console.log, err: console.error })
 */
export async function runAdmin(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: AdminIo,
): Promise<number> {
  const [command, ...rest] = argv
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    io.out(USAGE)
    return command === undefined ? 2 : 0
  }
  if (command === 'grant-moderator' || command === 'revoke-moderator')
    return moderator(command, rest, env, io)
  if (command !== 'create-org') {
    io.err(`unknown admin command: ${command}\n\n${USAGE}`)
    return 2
  }
  let name: string | undefined
  let json = false
  for (let index = 0; index < rest.length; index++) {
    const arg = rest[index]!
    if (arg === '--json') json = true
    else if (arg === '--help' || arg === '-h') {
      io.out(USAGE)
      return 0
    } else if (arg === '--name') name = rest[++index]
    else if (arg.startsWith('--name=')) name = arg.slice('--name='.length)
    else {
      io.err(`unknown option: ${arg}\n\n${USAGE}`)
      return 2
    }
  }
  if (!name?.trim()) {
    io.err(`--name NAME is required\n\n${USAGE}`)
    return 2
  }
  let database: AdminDatabase
  try {
    database = adminDatabase(env)
  } catch (error) {
    io.err(`error: ${(error as Error).message}`)
    return 2
  }
  try {
    const org = await withDatabase(database, (db) => createOrg(db, name, Date.now()))
    if (json) io.out(JSON.stringify({ id: org.id, name: name.trim(), apiKey: org.apiKey }))
    else {
      io.out(
        `Created organization ${org.id} (${name.trim()}) in ${
          database.kind === 'sqlite'
            ? `SQLite ${resolve(database.path)}`
            : `PostgreSQL schema ${database.schema}`
        }`,
      )
      io.out(`API key (shown once; store it now, only its hash is kept): ${org.apiKey}`)
    }
    return 0
  } catch (error) {
    io.err(`error: ${(error as Error).message}`)
    return 1
  }
}

/** `grant-moderator` / `revoke-moderator --org ORG_ID`: the organization must exist. */
async function moderator(
  command: 'grant-moderator' | 'revoke-moderator',
  rest: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: AdminIo,
): Promise<number> {
  let org: string | undefined
  for (let index = 0; index < rest.length; index++) {
    const arg = rest[index]!
    if (arg === '--help' || arg === '-h') {
      io.out(USAGE)
      return 0
    } else if (arg === '--org') org = rest[++index]
    else if (arg.startsWith('--org=')) org = arg.slice('--org='.length)
    else {
      io.err(`unknown option: ${arg}\n\n${USAGE}`)
      return 2
    }
  }
  if (!org?.trim()) {
    io.err(`--org ORG_ID is required\n\n${USAGE}`)
    return 2
  }
  const orgId = org.trim()
  let database: AdminDatabase
  try {
    database = adminDatabase(env)
  } catch (error) {
    io.err(`error: ${(error as Error).message}`)
    return 2
  }
  try {
    const found = await withDatabase(database, (db) => db.one('SELECT id FROM {orgs} WHERE id = ?', [orgId]))
    if (!found) {
      io.err(`error: no organization ${orgId} in this registry (create-org prints the ids it creates)`)
      return 1
    }
    const { repository } = await openRepository(database)
    try {
      if (command === 'grant-moderator') {
        await repository.mirrors.grantModerator(orgId, new Date().toISOString())
        io.out(`${orgId} is a moderator: its members review, publish and delete community mirrors`)
      } else {
        await repository.mirrors.revokeModerator(orgId)
        io.out(`${orgId} is no longer a moderator`)
      }
    } finally {
      await repository.close()
    }
    return 0
  } catch (error) {
    io.err(`error: ${(error as Error).message}`)
    return 1
  }
}

async function withDatabase<T>(
  database: AdminDatabase,
  work: (db: ReturnType<typeof authDb>) => Promise<T>,
): Promise<T> {
  if (database.kind === 'sqlite') {
    mkdirSync(dirname(resolve(database.path)), { recursive: true })
    const db = new Database(database.path)
    try {
      migrateAuthSqlite(db)
      return await work(authDb({ kind: 'sqlite', db }))
    } finally {
      db.close()
    }
  }
  const pool = new pg.Pool({ connectionString: database.connectionString, max: 1 })
  try {
    await migrateAuthPostgres(pool, database.schema)
    return await work(authDb({ kind: 'postgres', pool, schema: database.schema }))
  } finally {
    await pool.end()
  }
}

const invokedDirectly =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href
if (invokedDirectly) {
  const code = await runAdmin(process.argv.slice(2), process.env, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  })
  process.exitCode = code
}
