/**
 * The receiver's tables, in both dialects. One version for both; a database migrated by a newer receiver is
 * refused rather than misread.
 */

/**
 * The version of the tables this receiver writes. 2 added `receiver_registrations.sender` (the seller whose
 * registrations share one dedup keyspace); 3 added `publisher_domain` (adagents.json key pins) and
 * `revocation_url` (the seller's key revocation list). An older database gains the columns when opened. 4
 * expires events by time: on PostgreSQL `receiver_events` is partitioned by `received_at` (converted in place
 * when opened, see {@link postgresEventsConversion}), on SQLite an index serves the DELETE sweep.
 */
export const SCHEMA_VERSION = 4

/** Default retention of events, days (`EVENT_RETENTION_DAYS`). */
export const DEFAULT_EVENT_RETENTION_DAYS = 30

/** PostgreSQL: the narrowest `receiver_events` partition, one day of `received_at`. */
export const EVENT_PARTITION_SECONDS = 86_400

/** PostgreSQL: the widest `receiver_events` partition, seven days. */
export const EVENT_PARTITION_MAX_SECONDS = 7 * 86_400

/**
 * PostgreSQL: the width of `receiver_events` partitions for a retention: a quarter of it in whole days, from one
 * day to seven. Every new key is looked up in each partition kept (see {@link EVENTS_UNIQUENESS}), so fewer,
 * wider partitions make an event cheaper to record, at the price of keeping events up to one width past their
 * retention: 30 days of retention keep five to six seven-day partitions (events up to 37 days old) instead of
 * 31 day partitions. The width is chosen when the table is created (or converted) and stored in
 * `receiver_settings` (`event_partition_seconds`): partitions of one table never change width, whatever
 * retention a later start is given.
 */
export const eventPartitionSeconds = (retentionSeconds: number): number =>
  Math.min(
    EVENT_PARTITION_MAX_SECONDS,
    Math.max(EVENT_PARTITION_SECONDS, Math.floor(retentionSeconds / 4 / 86_400) * 86_400),
  )

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
-- The retention sweep's: events that may expire (nothing left to forward), oldest first.
CREATE INDEX IF NOT EXISTS receiver_events_expiry ON receiver_events (received_at)
  WHERE forward_state <> 'pending';
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

/**
 * How `receiver_events` keeps one row per (registration_id, idempotency_key) on PostgreSQL, where it is
 * partitioned by `received_at` and a unique index would have to include `received_at` (so could not say it).
 *
 * `receiver_events_record` takes a transaction advisory lock on (schema, registration_id, idempotency_key) for
 * each event of the group, in key order (groups sharing keys cannot deadlock), then, in a new statement, looks
 * the group's keys up in every partition (one scan of each partition's `receiver_events_key`, on
 * (idempotency_key, registration_id), for all the keys at once: a partition a day of retention), adds one to
 * `publications` of each row found (a second publication) or, for a takeover, returns it (the earlier owner's
 * publication, `recovered`, nothing written), and inserts the others in one statement. The locks are held to
 * the commit, so a second writer of the key waits and then, its statements running at READ COMMITTED (the
 * receiver's stores run there), sees the first one's row: exactly what `ON CONFLICT` on the unique constraint
 * did before version 4.
 *
 * The claim of the key alone would not have been enough: with the transactional inbox the event is written in
 * the transaction that took the claim (its row locked `FOR UPDATE` or inserted, to the commit), which does
 * serialize the deliveries of one key while the claim lives; but with `publication: 'claims'` the event is
 * written after the claim's own commit, and a takeover (the first owner's lease ran out) may write while the
 * first owner still does. The advisory lock is uncontended in the inbox case (the claim's row lock has
 * already made a second delivery wait) and costs no storage.
 *
 * Beyond the claim's retention (`retentionSeconds` of @adwire/webhooks: at least a day, or the registration's
 * retry horizon when longer) a re-delivery of the key is published again; the lookup still finds the event
 * while it is kept (`publications` 2, the `published_twice` alarm), as before. Once the event has expired (its
 * partition dropped, `EVENT_RETENTION_DAYS`), the key is new again: a re-delivery then stores a new row with
 * `publications` 1 (before version 4 the row was kept forever). The cost of the lookup grows with the
 * partitions kept (one index scan each per group), not with the rows.
 */
export const EVENTS_UNIQUENESS = 'receiver_events_record'

/** The PostgreSQL tables in schema `s` (quoted), created if missing. */
export const postgresSchema = (s: string) => {
  const literal = `'${s.replaceAll("'", "''")}'`
  return `
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
  seq bigint GENERATED ALWAYS AS IDENTITY,
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
  PRIMARY KEY (seq, received_at)
) PARTITION BY RANGE (received_at);
CREATE TABLE IF NOT EXISTS ${s}.receiver_events_default PARTITION OF ${s}.receiver_events DEFAULT;
CREATE INDEX IF NOT EXISTS receiver_events_key ON ${s}.receiver_events (idempotency_key, registration_id);
CREATE INDEX IF NOT EXISTS receiver_events_registration ON ${s}.receiver_events (registration_id, seq);
CREATE INDEX IF NOT EXISTS receiver_events_forward ON ${s}.receiver_events (forward_next_at)
  WHERE forward_state = 'pending';
-- Records published events, one (registration_id, idempotency_key) a row across every partition: see
-- EVENTS_UNIQUENESS in schema.ts. p_events: a JSON array of objects with the columns below and n, the
-- event's place in the caller's list (distinct keys; rows are inserted in that order); returns one row per
-- event, by key.
CREATE OR REPLACE FUNCTION ${s}.receiver_events_record(p_events json)
RETURNS TABLE (r_registration_id text, r_idempotency_key text, r_seq bigint, r_publications integer,
  r_recovered boolean)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_row record;
  v_index integer;
  v_registrations text[];
  v_keys text[];
  v_takeovers text[];
  v_seqs bigint[];
  v_times double precision[];
  v_counts integer[];
  v_hits text[];
BEGIN
  -- The group's keys, in one order for every caller: two groups sharing keys cannot deadlock on their locks.
  SELECT array_agg(x.registration_id ORDER BY x.registration_id, x.idempotency_key),
         array_agg(x.idempotency_key ORDER BY x.registration_id, x.idempotency_key),
         coalesce(array_agg(x.registration_id || chr(31) || x.idempotency_key) FILTER (WHERE x.takeover), '{}')
    INTO v_registrations, v_keys, v_takeovers
    FROM json_to_recordset(p_events) AS x(registration_id text, idempotency_key text, takeover boolean);
  FOR v_index IN 1 .. coalesce(cardinality(v_keys), 0) LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended(
      json_build_array(${literal}, 'receiver_event', v_registrations[v_index], v_keys[v_index])::text, 0));
  END LOOP;
  -- A new statement after the locks: at READ COMMITTED it sees what their last holders committed. One probe
  -- of each partition's receiver_events_key per key, by idempotency_key alone (the registration is compared
  -- on the row found: OFFSET 0 keeps that condition out of the scan, so that no plan probes the registration's
  -- index instead, which a partition without statistics yet costs the same and which reads every event of the
  -- registration). A group's keys are probed one by one, each in every partition: one scan of the table for
  -- all of them (what a partition without statistics yet got) costs as many comparisons as rows times keys.
  IF cardinality(v_keys) = 1 THEN
    SELECT array_agg(e.seq), array_agg(e.received_at), array_agg(e.publications),
           array_agg(e.registration_id || chr(31) || e.idempotency_key)
      INTO v_seqs, v_times, v_counts, v_hits
      FROM (SELECT e.seq, e.received_at, e.publications, e.registration_id, e.idempotency_key
              FROM ${s}.receiver_events e WHERE e.idempotency_key = v_keys[1] OFFSET 0) e
     WHERE e.registration_id = v_registrations[1];
  ELSE
    SELECT array_agg(e.seq), array_agg(e.received_at), array_agg(e.publications),
           array_agg(e.registration_id || chr(31) || e.idempotency_key)
      INTO v_seqs, v_times, v_counts, v_hits
      FROM unnest(v_keys, v_registrations) AS k(idempotency_key, registration_id)
      CROSS JOIN LATERAL (
        SELECT e.seq, e.received_at, e.publications, e.registration_id, e.idempotency_key
          FROM ${s}.receiver_events e WHERE e.idempotency_key = k.idempotency_key OFFSET 0) e
     WHERE e.registration_id = k.registration_id;
  END IF;
  FOR v_index IN 1 .. coalesce(cardinality(v_seqs), 0) LOOP
    r_registration_id := split_part(v_hits[v_index], chr(31), 1);
    r_idempotency_key := substr(v_hits[v_index], length(r_registration_id) + 2);
    r_seq := v_seqs[v_index];
    IF v_hits[v_index] = ANY (v_takeovers) THEN
      -- The earlier owner's publication of this same event: nothing written.
      r_publications := v_counts[v_index];
      r_recovered := true;
    ELSE
      -- The same key published again: counted, never hidden.
      UPDATE ${s}.receiver_events e SET publications = e.publications + 1
       WHERE e.seq = v_seqs[v_index] AND e.received_at = v_times[v_index]
       RETURNING e.publications INTO r_publications;
      r_recovered := false;
    END IF;
    RETURN NEXT;
  END LOOP;
  FOR v_row IN
    INSERT INTO ${s}.receiver_events AS e (registration_id, idempotency_key, sender, operation_id, task_id,
        task_type, status, terminal, received_at, payload, publications, forward_state, forward_next_at)
      SELECT x.registration_id, x.idempotency_key, x.sender, x.operation_id, x.task_id, x.task_type, x.status,
          x.terminal, x.received_at, x.payload, 1, CASE WHEN x.forward THEN 'pending' ELSE 'none' END,
          CASE WHEN x.forward THEN x.received_at END
        FROM json_to_recordset(p_events) AS x(n integer, registration_id text, idempotency_key text,
          sender text, operation_id text, task_id text, task_type text, status text, terminal boolean,
          received_at double precision, payload text, forward boolean)
       WHERE v_hits IS NULL OR NOT (x.registration_id || chr(31) || x.idempotency_key) = ANY (v_hits)
       ORDER BY x.n
      RETURNING e.registration_id, e.idempotency_key, e.seq
  LOOP
    r_registration_id := v_row.registration_id;
    r_idempotency_key := v_row.idempotency_key;
    r_seq := v_row.seq;
    r_publications := 1;
    r_recovered := false;
    RETURN NEXT;
  END LOOP;
END
$fn$;
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
}

/**
 * PostgreSQL, before {@link postgresSchema}: a `receiver_events` of version 3 or older (one plain table, unique
 * on the key) is renamed `receiver_events_v3` and loses its constraints and indexes (their names are taken by
 * the partitioned table's); {@link postgresEventsCopy} then moves its rows. Run in the migration's transaction.
 */
export const postgresEventsConversion = (s: string) => `
ALTER TABLE ${s}.receiver_events RENAME TO receiver_events_v3;
DO $do$
DECLARE
  v_name text;
BEGIN
  FOR v_name IN SELECT conname FROM pg_constraint WHERE conrelid = '${s}.receiver_events_v3'::regclass
    AND contype IN ('p', 'u')
  LOOP
    EXECUTE format('ALTER TABLE ${s}.receiver_events_v3 DROP CONSTRAINT %I', v_name);
  END LOOP;
END
$do$;
DROP INDEX IF EXISTS ${s}.receiver_events_registration;
DROP INDEX IF EXISTS ${s}.receiver_events_forward;
`

/**
 * PostgreSQL, after {@link postgresSchema} created the partitioned table: the partitions of the days the old
 * rows fall in (the 400 latest; older rows go to the default partition, whose expired rows the sweep deletes),
 * the rows with their own `seq`, the identity continuing where the old one stood, the old table dropped.
 */
export const postgresEventsCopy = (s: string, width: number) => `
DO $do$
DECLARE
  v_start bigint;
BEGIN
  FOR v_start IN
    SELECT DISTINCT (floor(received_at / ${width}) * ${width})::bigint AS start
      FROM ${s}.receiver_events_v3 WHERE received_at >= 0 AND received_at < 1e15 ORDER BY start DESC LIMIT 400
  LOOP
    EXECUTE format('CREATE TABLE %s.%I PARTITION OF ${s}.receiver_events FOR VALUES FROM (%s) TO (%s)',
      '${s}', 'receiver_events_p' || v_start, v_start, v_start + ${width});
  END LOOP;
END
$do$;
INSERT INTO ${s}.receiver_events (seq, registration_id, idempotency_key, sender, operation_id, task_id,
    task_type, status, terminal, received_at, payload, publications, forward_state, forward_attempts,
    forward_next_at, forward_lease_until, forward_fence, forward_error, forwarded_at)
  OVERRIDING SYSTEM VALUE
  SELECT seq, registration_id, idempotency_key, sender, operation_id, task_id, task_type, status, terminal,
    received_at, payload, publications, forward_state, forward_attempts, forward_next_at, forward_lease_until,
    forward_fence, forward_error, forwarded_at
    FROM ${s}.receiver_events_v3;
-- The next seq is the one the old identity would have handed out (never one a stream already saw).
SELECT setval(pg_get_serial_sequence('${s}.receiver_events', 'seq'),
  greatest(
    coalesce(pg_sequence_last_value(pg_get_serial_sequence('${s}.receiver_events_v3', 'seq')::regclass), 0),
    coalesce((SELECT max(seq) FROM ${s}.receiver_events_v3), 0)) + 1,
  false);
DROP TABLE ${s}.receiver_events_v3;
`
