/**
 * Migration 5: the outbox and webhook_activity partitioned by time, so that they expire by dropping whole
 * partitions instead of deleting row by row (see `partitions.ts` for the maintenance).
 *
 * - `outbox` is partitioned by range of `deadline_at` (set at enqueue, never changed: an entry never moves
 *   between partitions). A partition is dropped once its upper bound has passed and it holds no pending entry.
 * - `webhook_activity` is partitioned by range of `at` (the attempt's time). A partition is dropped once its
 *   upper bound is 30 days old.
 * - Each has a DEFAULT partition, so a write outside the partitions created so far never fails; creating a
 *   partition later moves the default's rows of its range into it, and the sweep still deletes the default's
 *   own expired rows (normally none).
 * - The rows copied from version 4 go into partitions of their own ranges, created here (the 400 latest
 *   ranges that hold rows, about 100 days of the outbox and over a year of activity; any older row goes to the
 *   default partition and is deleted from there), so that they too expire by dropping partitions and the
 *   partitions created later never have to read a large default partition. The widths are those of
 *   `OUTBOX_PARTITIONS` and `ACTIVITY_PARTITIONS` when this migration was written: six hours and one day.
 *
 * Uniqueness: a unique index of a partitioned table must include the partition column, so `outbox.id` is no
 * longer a primary key on its own. `outbox_insert` keeps an entry id unique across partitions: under a
 * transaction advisory lock on the id it looks for the id in every partition (one index probe each) and inserts,
 * or raises `unique_violation` as the primary key did. Its caller runs it at READ COMMITTED (each statement of the
 * function then sees what committed while it waited for the lock). `seq` stays an identity and is indexed
 * without being unique (the identity alone hands out distinct values). `outbox_media_buys` loses its foreign key
 * to `outbox (seq)`: its rows already leave when their entry is delivered, failed or superseded, and a partition
 * is never dropped while it holds a pending entry.
 *
 * Times are the caller's Unix seconds; the database clock is never read. Partition bounds follow the caller's
 * clock (the `now` given to the sweep and to the stores on open).
 */
export function partitionsSchema(schema: string): string {
  const s = schema
  return `
ALTER TABLE ${s}.outbox_media_buys DROP CONSTRAINT IF EXISTS outbox_media_buys_entry_seq_fkey;
ALTER TABLE ${s}.outbox RENAME TO outbox_v4;
ALTER TABLE ${s}.webhook_activity RENAME TO webhook_activity_v4;

CREATE TABLE ${s}.outbox (
  seq bigint GENERATED ALWAYS AS IDENTITY,
  id text NOT NULL,
  destination text NOT NULL,
  url text NOT NULL,
  idempotency_key text NOT NULL,
  body text NOT NULL,
  headers json NOT NULL,
  coalesce_key text,
  created_at double precision NOT NULL,
  next_attempt_at double precision NOT NULL,
  deadline_at double precision NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed', 'superseded')),
  fence text,
  lease_until double precision NOT NULL DEFAULT 0,
  media_buy_ids text[] NOT NULL DEFAULT '{}',
  barrier boolean NOT NULL DEFAULT false
) PARTITION BY RANGE (deadline_at);
CREATE TABLE ${s}.outbox_default PARTITION OF ${s}.outbox DEFAULT;
${partitionsFor(s, 'outbox', 'outbox_v4', 'deadline_at', 21_600)}
INSERT INTO ${s}.outbox (seq, id, destination, url, idempotency_key, body, headers, coalesce_key, created_at,
    next_attempt_at, deadline_at, attempts, state, fence, lease_until, media_buy_ids, barrier)
  OVERRIDING SYSTEM VALUE
  SELECT seq, id, destination, url, idempotency_key, body, headers, coalesce_key, created_at, next_attempt_at,
    deadline_at, attempts, state, fence, lease_until, media_buy_ids, barrier FROM ${s}.outbox_v4;
SELECT setval(pg_get_serial_sequence('${s}.outbox', 'seq'), coalesce((SELECT max(seq) FROM ${s}.outbox_v4), 0) + 1, false);
DROP TABLE ${s}.outbox_v4;
ALTER TABLE ${s}.outbox ADD PRIMARY KEY (id, deadline_at);
CREATE INDEX outbox_seq ON ${s}.outbox (seq);
CREATE INDEX outbox_due ON ${s}.outbox (next_attempt_at, created_at, seq) WHERE state = 'pending';
CREATE INDEX outbox_pending ON ${s}.outbox (destination, seq) WHERE state = 'pending';
CREATE INDEX outbox_coalesce ON ${s}.outbox (destination, coalesce_key)
  WHERE state = 'pending' AND coalesce_key IS NOT NULL;
CREATE INDEX outbox_finished ON ${s}.outbox (deadline_at) WHERE state <> 'pending';

CREATE TABLE ${s}.webhook_activity (
  seq bigint GENERATED ALWAYS AS IDENTITY,
  destination text NOT NULL,
  idempotency_key text NOT NULL,
  status text NOT NULL,
  http_status_code integer,
  attempt integer NOT NULL,
  error_message text,
  at double precision NOT NULL
) PARTITION BY RANGE (at);
CREATE TABLE ${s}.webhook_activity_default PARTITION OF ${s}.webhook_activity DEFAULT;
${partitionsFor(s, 'webhook_activity', 'webhook_activity_v4', 'at', 86_400)}
INSERT INTO ${s}.webhook_activity (seq, destination, idempotency_key, status, http_status_code, attempt, error_message, at)
  OVERRIDING SYSTEM VALUE
  SELECT seq, destination, idempotency_key, status, http_status_code, attempt, error_message, at
    FROM ${s}.webhook_activity_v4;
SELECT setval(pg_get_serial_sequence('${s}.webhook_activity', 'seq'),
  coalesce((SELECT max(seq) FROM ${s}.webhook_activity_v4), 0) + 1, false);
DROP TABLE ${s}.webhook_activity_v4;
ALTER TABLE ${s}.webhook_activity ADD PRIMARY KEY (seq, at);
CREATE INDEX webhook_activity_destination ON ${s}.webhook_activity (destination, seq DESC);
CREATE INDEX webhook_activity_at ON ${s}.webhook_activity (at);

-- An entry's insert with its id kept unique across partitions (see above); returns the entry's seq.
CREATE FUNCTION ${s}.outbox_insert(
  p_id text, p_destination text, p_url text, p_idempotency_key text, p_body text, p_headers json,
  p_coalesce_key text, p_created_at double precision, p_next_attempt_at double precision,
  p_deadline_at double precision, p_media_buy_ids text[], p_barrier boolean
) RETURNS bigint
LANGUAGE plpgsql AS $fn$
DECLARE
  v_seq bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(json_build_array('${s}', 'outbox_id', p_id)::text, 0));
  IF EXISTS (SELECT 1 FROM ${s}.outbox o WHERE o.id = p_id) THEN
    RAISE unique_violation USING MESSAGE = format('outbox entry %s exists', p_id);
  END IF;
  INSERT INTO ${s}.outbox (id, destination, url, idempotency_key, body, headers, coalesce_key, created_at,
      next_attempt_at, deadline_at, media_buy_ids, barrier)
    VALUES (p_id, p_destination, p_url, p_idempotency_key, p_body, p_headers, p_coalesce_key, p_created_at,
      p_next_attempt_at, p_deadline_at, p_media_buy_ids, p_barrier)
    RETURNING seq INTO v_seq;
  RETURN v_seq;
END
$fn$;
`
}

/** The partitions of `table` for the ranges of `width` seconds that rows of `source` fall in (the latest 400). */
function partitionsFor(s: string, table: string, source: string, column: string, width: number): string {
  return `DO $do$
DECLARE
  v_start bigint;
BEGIN
  FOR v_start IN
    SELECT DISTINCT (floor(${column} / ${width}) * ${width})::bigint AS start FROM ${s}.${source}
     WHERE ${column} >= 0 AND ${column} < 1e15 ORDER BY start DESC LIMIT 400
  LOOP
    EXECUTE format('CREATE TABLE %s.%I PARTITION OF %s.${table} FOR VALUES FROM (%s) TO (%s)',
      '${s}', '${table}_p' || v_start, '${s}', v_start, v_start + ${width});
  END LOOP;
END
$do$;`
}
