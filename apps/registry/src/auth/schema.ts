/**
 * The auth tables: organizations and their API keys, users, OAuth clients, authorization codes, refresh
 * tokens and the access-token signing key. Every table is prefixed `registry_auth_` so it can share a
 * database (or PostgreSQL schema) with the rest of the registry.
 */

/** Version of the auth tables this code writes; stored in `registry_auth_meta`. */
export const AUTH_SCHEMA_VERSION = 1

/** Table definitions; `bigint` is epoch milliseconds, `t(name)` qualifies a table name. */
export function authTables(t: (name: string) => string, bigint: string): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${t('meta')} (name TEXT PRIMARY KEY, value TEXT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${t('orgs')} (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      created_at ${bigint} NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${t('api_keys')} (
      id TEXT PRIMARY KEY,
      org_id TEXT NOT NULL REFERENCES ${t('orgs')}(id) ON DELETE CASCADE,
      key_hash TEXT NOT NULL UNIQUE,
      key_prefix TEXT NOT NULL,
      created_at ${bigint} NOT NULL,
      revoked_at ${bigint})`,
    `CREATE TABLE IF NOT EXISTS ${t('users')} (
      id TEXT PRIMARY KEY,
      email TEXT NOT NULL,
      org_id TEXT NOT NULL REFERENCES ${t('orgs')}(id) ON DELETE CASCADE,
      created_at ${bigint} NOT NULL,
      UNIQUE (email, org_id))`,
    `CREATE TABLE IF NOT EXISTS ${t('clients')} (
      client_id TEXT PRIMARY KEY,
      client_secret_hash TEXT,
      token_endpoint_auth_method TEXT NOT NULL,
      client_name TEXT,
      redirect_uris TEXT NOT NULL,
      metadata TEXT NOT NULL,
      created_at ${bigint} NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${t('codes')} (
      code_hash TEXT PRIMARY KEY,
      client_id TEXT NOT NULL,
      user_id TEXT NOT NULL,
      redirect_uri TEXT NOT NULL,
      code_challenge TEXT NOT NULL,
      scope TEXT NOT NULL,
      family_id TEXT NOT NULL,
      expires_at ${bigint} NOT NULL,
      used_at ${bigint})`,
    `CREATE TABLE IF NOT EXISTS ${t('refresh_tokens')} (
      token_hash TEXT PRIMARY KEY,
      family_id TEXT NOT NULL,
      client_id TEXT NOT NULL,
      user_id TEXT NOT NULL,
      scope TEXT NOT NULL,
      created_at ${bigint} NOT NULL,
      expires_at ${bigint} NOT NULL,
      rotated_at ${bigint},
      revoked_at ${bigint})`,
    `CREATE INDEX IF NOT EXISTS registry_auth_refresh_tokens_family ON ${t('refresh_tokens')} (family_id)`,
    `CREATE TABLE IF NOT EXISTS ${t('signing_keys')} (
      kid TEXT PRIMARY KEY,
      alg TEXT NOT NULL,
      private_jwk TEXT NOT NULL,
      public_jwk TEXT NOT NULL,
      created_at ${bigint} NOT NULL)`,
  ]
}
