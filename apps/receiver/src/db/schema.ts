/**
 * The receiver's tables, in both dialects. One version for both; a database migrated by a newer receiver is
 * refused rather than misread.
 */

/**
 * The version of the tables this receiver writes. 2 added `receiver_registrations.sender` (the seller whose
 * registrations share one dedup keyspace); 3 added `publisher_domain` (adagents.json key pins) and
 * `revocation_url` (the seller's key revocation list). An older database gains the columns when opened.
 */
export const SCHEMA_VERSION = 3

/** Registration columns (all text) added after version 1: added in place to older tables when opened. */
export const ADDED_REGISTRATION_COLUMNS = ['sender', 'publisher_domain', 'revocation_url'] as const

/** The SQLite tables (created if missing). */
export const SQLITE_SCHEMA = `
CREATE TABLE IF NOT EXISTS receiver_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS receiver_registrations (
  id TEXT PRIMARY KEY,
  auth_mode TEXT NOT NULL,
  config TEXT NOT NULL,
  shape TEXT,
  token TEXT,
  retry_horizon_seconds INTEGER,
  label TEXT,
  created_at REAL NOT NULL,
  sender TEXT,
  publisher_domain TEXT,
  revocation_url TEXT
);
CREATE TABLE IF NOT EXISTS receiver_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  registration_id TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  sender TEXT NOT NULL,
  operation_id TEXT,
  task_id TEXT,
  task_type TEXT,
  status TEXT,
  terminal INTEGER NOT NULL,
  received_at REAL NOT NULL,
  payload TEXT NOT NULL,
  publications INTEGER NOT NULL DEFAULT 1,
  forward_state TEXT NOT NULL,
  forward_attempts INTEGER NOT NULL DEFAULT 0,
  forward_next_at REAL,
  forward_lease_until REAL,
  forward_fence TEXT,
  forward_error TEXT,
  forwarded_at REAL,
  UNIQUE (registration_id, idempotency_key)
);
CREATE INDEX IF NOT EXISTS receiver_events_registration ON receiver_events (registration_id, seq);
CREATE INDEX IF NOT EXISTS receiver_events_forward ON receiver_events (forward_next_at)
  WHERE forward_state = 'pending';
CREATE TABLE IF NOT EXISTS receiver_failures (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  registration_id TEXT NOT NULL,
  code TEXT NOT NULL,
  http_status INTEGER NOT NULL,
  message TEXT,
  at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS receiver_failures_registration ON receiver_failures (registration_id, seq);
CREATE INDEX IF NOT EXISTS receiver_failures_at ON receiver_failures (at);
`

/** The PostgreSQL tables in schema `s` (quoted), created if missing. */
export const postgresSchema = (s: string) => `
CREATE TABLE IF NOT EXISTS ${s}.receiver_settings (name text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS ${s}.receiver_registrations (
  id text PRIMARY KEY,
  auth_mode text NOT NULL,
  config text NOT NULL,
  shape text,
  token text,
  retry_horizon_seconds integer,
  label text,
  created_at double precision NOT NULL,
  sender text,
  publisher_domain text,
  revocation_url text
);
CREATE TABLE IF NOT EXISTS ${s}.receiver_events (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  registration_id text NOT NULL,
  idempotency_key text NOT NULL,
  sender text NOT NULL,
  operation_id text,
  task_id text,
  task_type text,
  status text,
  terminal boolean NOT NULL,
  received_at double precision NOT NULL,
  payload text NOT NULL,
  publications integer NOT NULL DEFAULT 1,
  forward_state text NOT NULL,
  forward_attempts integer NOT NULL DEFAULT 0,
  forward_next_at double precision,
  forward_lease_until double precision,
  forward_fence text,
  forward_error text,
  forwarded_at double precision,
  UNIQUE (registration_id, idempotency_key)
);
CREATE INDEX IF NOT EXISTS receiver_events_registration ON ${s}.receiver_events (registration_id, seq);
CREATE INDEX IF NOT EXISTS receiver_events_forward ON ${s}.receiver_events (forward_next_at)
  WHERE forward_state = 'pending';
CREATE TABLE IF NOT EXISTS ${s}.receiver_failures (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  registration_id text NOT NULL,
  code text NOT NULL,
  http_status integer NOT NULL,
  message text,
  at double precision NOT NULL
);
CREATE INDEX IF NOT EXISTS receiver_failures_registration ON ${s}.receiver_failures (registration_id, seq);
CREATE INDEX IF NOT EXISTS receiver_failures_at ON ${s}.receiver_failures (at);
ALTER TABLE ${s}.receiver_registrations ADD COLUMN IF NOT EXISTS sender text;
ALTER TABLE ${s}.receiver_registrations ADD COLUMN IF NOT EXISTS publisher_domain text;
ALTER TABLE ${s}.receiver_registrations ADD COLUMN IF NOT EXISTS revocation_url text;
`
