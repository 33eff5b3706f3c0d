/** Organizations, their API keys, and the users who signed in on behalf of an organization. */
import type { AuthDb } from './db.js'
import { looksLikeApiKey, newApiKey, randomToken, sha256Hex } from './secrets.js'

/** Who a request acts as. `org`: an organization API key; `user`: an access token issued to a user. */
export interface Principal {
  kind: 'org' | 'user'
  /** The organization id (kind `org`) or the user id (kind `user`). */
  id: string
  /** The organization the principal belongs to. */
  orgId?: string
  /** That organization's name. */
  orgName?: string
}

export interface CreatedOrg {
  id: string
  /** The API key, shown once: only its SHA-256 hash is stored. */
  apiKey: string
}

/** Creates an organization and its first API key. */
export async function createOrg(db: AuthDb, name: string, now: number): Promise<CreatedOrg> {
  const trimmed = name.trim()
  if (!trimmed || trimmed.length > 200) throw new RangeError('an organization name has 1 to 200 characters')
  const id = `org_${randomToken(12)}`
  await db.run(`INSERT INTO {orgs} (id, name, created_at) VALUES (?, ?, ?)`, [id, trimmed, now])
  const apiKey = await addApiKey(db, id, now)
  return { id, apiKey }
}

/** Adds an API key to an organization and returns it (the only time it is visible). */
export async function addApiKey(db: AuthDb, orgId: string, now: number): Promise<string> {
  const apiKey = newApiKey()
  await db.run(
    `INSERT INTO {api_keys} (id, org_id, key_hash, key_prefix, created_at) VALUES (?, ?, ?, ?, ?)`,
    [`key_${randomToken(12)}`, orgId, sha256Hex(apiKey), apiKey.slice(0, 10), now],
  )
  return apiKey
}

/** The organization an API key belongs to, or `undefined` for an unknown or revoked key. */
export async function orgForApiKey(
  db: AuthDb,
  apiKey: string,
): Promise<{ id: string; name: string } | undefined> {
  if (!looksLikeApiKey(apiKey)) return undefined
  return db.one<{ id: string; name: string }>(
    `SELECT o.id, o.name FROM {api_keys} k JOIN {orgs} o ON o.id = k.org_id
     WHERE k.key_hash = ? AND k.revoked_at IS NULL`,
    [sha256Hex(apiKey)],
  )
}

/** Finds or creates the user `email` of `orgId`; resolves to the user id. */
export async function upsertUser(db: AuthDb, email: string, orgId: string, now: number): Promise<string> {
  const normalized = email.trim().toLowerCase()
  await db.run(
    `INSERT INTO {users} (id, email, org_id, created_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (email, org_id) DO NOTHING`,
    [`usr_${randomToken(12)}`, normalized, orgId, now],
  )
  const row = await db.one<{ id: string }>(`SELECT id FROM {users} WHERE email = ? AND org_id = ?`, [
    normalized,
    orgId,
  ])
  if (!row) throw new Error('the user could not be stored')
  return row.id
}

/** A stored user, or `undefined` once the user (or their organization) is gone. */
export async function findUser(
  db: AuthDb,
  userId: string,
): Promise<{ id: string; email: string; org_id: string; org_name: string } | undefined> {
  return db.one(
    `SELECT u.id, u.email, u.org_id, o.name AS org_name FROM {users} u JOIN {orgs} o ON o.id = u.org_id
     WHERE u.id = ?`,
    [userId],
  )
}
