/**
 * The PostgreSQL tables as schema version 3 of the receiver created them (receiver_events one plain table,
 * unique on the key), kept verbatim for the upgrade test: a database created by that release.
 */
export const postgresSchemaV3 = (s: string) => `
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
