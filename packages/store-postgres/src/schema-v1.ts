/**
 * Migration 1: the tables, indexes and the two functions that need several statements under one lock.
 *
 * Counters: `claim_scopes.records` and `replay_keyids.entries` are the number of rows a scope or keyid holds
 * (live or expired but not yet deleted), kept exact by every writer holding the counter's row lock. A capped
 * operation below its cap needs no count at all; at the cap it deletes its own expired rows first (each row
 * is deleted once, so this costs O(1) amortised) and the counter is then the live count. This is what makes
 * the caps exact under concurrency without counting up to a million rows per call.
 *
 * Lock order, which keeps this free of deadlocks: a counter row before the rows it counts. `claim` and
 * `remember_nonce` lock one counter; the sweep locks counters in key order, then deletes.
 *
 * Times are double precision Unix seconds given by the caller; the database clock is never read.
 *
 * Distribution columns (Citus; the table in the package README says why), each named with `=` by every
 * statement of the inbox and the outbox on its table: `claims.scope` and `claim_scopes.scope` (the sender,
 * colocated), `terminals.sender`, `replay_nonces.keyid` and `replay_keyids.keyid` (the sender's signing key,
 * colocated), `outbox.destination` and `webhook_activity.destination`. Not distributable as created here:
 * `outbox.id` (primary key) and `outbox.seq`, `webhook_activity.seq` (unique without the destination).
 */
export function initialSchema(schema: string): string {
  const s = schema
  return `
CREATE TABLE ${s}.claims (
  namespace text NOT NULL,
  scope text NOT NULL,
  key text NOT NULL,
  fingerprint text NOT NULL,
  state text NOT NULL CHECK (state IN ('processing', 'completed')),
  fence text NOT NULL,
  lease_until double precision NOT NULL,
  expires_at double precision NOT NULL,
  result text,
  PRIMARY KEY (namespace, scope, key)
);
CREATE INDEX claims_expiry ON ${s}.claims (expires_at);

CREATE TABLE ${s}.claim_scopes (
  namespace text NOT NULL,
  scope text NOT NULL,
  records bigint NOT NULL CHECK (records >= 0),
  PRIMARY KEY (namespace, scope)
);

CREATE TABLE ${s}.terminals (
  sender text NOT NULL,
  task_id text NOT NULL,
  comparison text NOT NULL,
  state text NOT NULL CHECK (state IN ('publishing', 'published')),
  owner text NOT NULL,
  lease_until double precision NOT NULL,
  expires_at double precision NOT NULL,
  PRIMARY KEY (sender, task_id)
);
CREATE INDEX terminals_expiry ON ${s}.terminals (expires_at);

CREATE TABLE ${s}.outbox (
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  id text PRIMARY KEY,
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
  lease_until double precision NOT NULL DEFAULT 0
);
CREATE INDEX outbox_due ON ${s}.outbox (next_attempt_at, created_at, seq) WHERE state = 'pending';
CREATE INDEX outbox_pending ON ${s}.outbox (destination, seq) WHERE state = 'pending';
CREATE INDEX outbox_coalesce ON ${s}.outbox (destination, coalesce_key)
  WHERE state = 'pending' AND coalesce_key IS NOT NULL;
CREATE INDEX outbox_finished ON ${s}.outbox (deadline_at) WHERE state <> 'pending';

CREATE TABLE ${s}.webhook_activity (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  destination text NOT NULL,
  idempotency_key text NOT NULL,
  status text NOT NULL,
  http_status_code integer,
  attempt integer NOT NULL,
  error_message text,
  at double precision NOT NULL
);
CREATE INDEX webhook_activity_destination ON ${s}.webhook_activity (destination, seq DESC);

CREATE TABLE ${s}.replay_nonces (
  keyid text NOT NULL,
  nonce text NOT NULL,
  expires_at double precision NOT NULL,
  PRIMARY KEY (keyid, nonce)
);
CREATE INDEX replay_nonces_expiry ON ${s}.replay_nonces (expires_at);

CREATE TABLE ${s}.replay_keyids (
  keyid text PRIMARY KEY,
  entries bigint NOT NULL CHECK (entries >= 0)
);

-- One claim, one round trip. Outcomes: claimed, takeover, processing, completed, conflict, capacity.
CREATE FUNCTION ${s}.claim(
  p_namespace text, p_scope text, p_key text, p_fingerprint text, p_fence text, p_now double precision,
  p_lease_seconds double precision, p_retention_seconds double precision, p_max_per_scope bigint
) RETURNS TABLE (o_outcome text, o_lease_until double precision, o_result text)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_row ${s}.claims%ROWTYPE;
  -- 0: plain read; 1: the record is locked; 2: the scope counter and the record are locked.
  v_stage integer := 0;
  v_present boolean;
  v_records bigint;
  v_deleted bigint;
BEGIN
  LOOP
    IF v_stage = 0 THEN
      SELECT * INTO v_row FROM ${s}.claims c
        WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key;
    ELSE
      SELECT * INTO v_row FROM ${s}.claims c
        WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key FOR UPDATE;
    END IF;
    v_present := FOUND;
    IF v_present AND v_row.expires_at > p_now THEN
      -- A live record. The fingerprint of a live record never changes and completion is final, so these
      -- answers need no lock (the common duplicate stays a read); only a takeover decides under the row lock.
      IF v_row.fingerprint <> p_fingerprint THEN
        RETURN QUERY SELECT 'conflict'::text, NULL::double precision, NULL::text;
        RETURN;
      ELSIF v_row.state = 'completed' THEN
        RETURN QUERY SELECT 'completed'::text, NULL::double precision, v_row.result;
        RETURN;
      ELSIF v_row.lease_until > p_now THEN
        RETURN QUERY SELECT 'processing'::text, v_row.lease_until, NULL::text;
        RETURN;
      ELSIF v_stage > 0 THEN
        UPDATE ${s}.claims c SET fence = p_fence, lease_until = p_now + p_lease_seconds
          WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key;
        RETURN QUERY SELECT 'takeover'::text, p_now + p_lease_seconds, NULL::text;
        RETURN;
      END IF;
      v_stage := 1;
      CONTINUE;
    END IF;
    EXIT WHEN v_stage = 2;
    -- No live record: serialise on the scope counter (before any row: the lock order), then look again
    -- with a snapshot taken after the lock.
    LOOP
      SELECT cs.records INTO v_records FROM ${s}.claim_scopes cs
        WHERE cs.namespace = p_namespace AND cs.scope = p_scope FOR UPDATE;
      EXIT WHEN FOUND;
      INSERT INTO ${s}.claim_scopes (namespace, scope, records) VALUES (p_namespace, p_scope, 0) ON CONFLICT DO NOTHING;
    END LOOP;
    v_stage := 2;
  END LOOP;

  -- A new record. Below the cap the counter (which also counts expired rows) already proves there is room.
  IF p_max_per_scope IS NOT NULL AND v_records >= p_max_per_scope THEN
    DELETE FROM ${s}.claims c WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.expires_at <= p_now;
    GET DIAGNOSTICS v_deleted = ROW_COUNT;
    v_present := false;
    IF v_deleted > 0 THEN
      v_records := v_records - v_deleted;
      UPDATE ${s}.claim_scopes cs SET records = v_records WHERE cs.namespace = p_namespace AND cs.scope = p_scope;
    END IF;
    IF v_records >= p_max_per_scope THEN
      RETURN QUERY SELECT 'capacity'::text, NULL::double precision, NULL::text;
      RETURN;
    END IF;
  END IF;

  IF v_present THEN
    -- An expired record of this key: start it afresh (its retention runs from now).
    UPDATE ${s}.claims c SET fingerprint = p_fingerprint, state = 'processing', fence = p_fence,
        lease_until = p_now + p_lease_seconds, expires_at = p_now + p_retention_seconds, result = NULL
      WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key;
  ELSE
    INSERT INTO ${s}.claims (namespace, scope, key, fingerprint, state, fence, lease_until, expires_at, result)
      VALUES (p_namespace, p_scope, p_key, p_fingerprint, 'processing', p_fence, p_now + p_lease_seconds,
              p_now + p_retention_seconds, NULL);
    UPDATE ${s}.claim_scopes cs SET records = v_records + 1 WHERE cs.namespace = p_namespace AND cs.scope = p_scope;
  END IF;
  RETURN QUERY SELECT 'claimed'::text, p_now + p_lease_seconds, NULL::text;
END
$fn$;

-- Step 13: store a nonce atomically with the replay and per-keyid cap checks. Outcomes: stored, replayed, capacity.
CREATE FUNCTION ${s}.remember_nonce(
  p_keyid text, p_nonce text, p_expires_at double precision, p_cap bigint, p_now double precision
) RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  v_entries bigint;
  v_expires double precision;
  v_present boolean;
  v_deleted bigint;
BEGIN
  LOOP
    SELECT k.entries INTO v_entries FROM ${s}.replay_keyids k WHERE k.keyid = p_keyid FOR UPDATE;
    EXIT WHEN FOUND;
    INSERT INTO ${s}.replay_keyids (keyid, entries) VALUES (p_keyid, 0) ON CONFLICT DO NOTHING;
  END LOOP;
  -- Every writer of this keyid's nonces holds its counter, so this read is current.
  SELECT n.expires_at INTO v_expires FROM ${s}.replay_nonces n WHERE n.keyid = p_keyid AND n.nonce = p_nonce;
  v_present := FOUND;
  IF v_present AND v_expires > p_now THEN
    RETURN 'replayed';
  END IF;
  IF v_entries >= p_cap THEN
    DELETE FROM ${s}.replay_nonces n WHERE n.keyid = p_keyid AND n.expires_at <= p_now;
    GET DIAGNOSTICS v_deleted = ROW_COUNT;
    v_present := false;
    IF v_deleted > 0 THEN
      v_entries := v_entries - v_deleted;
      UPDATE ${s}.replay_keyids k SET entries = v_entries WHERE k.keyid = p_keyid;
    END IF;
    IF v_entries >= p_cap THEN
      RETURN 'capacity';
    END IF;
  END IF;
  IF v_present THEN
    UPDATE ${s}.replay_nonces n SET expires_at = p_expires_at WHERE n.keyid = p_keyid AND n.nonce = p_nonce;
  ELSE
    INSERT INTO ${s}.replay_nonces (keyid, nonce, expires_at) VALUES (p_keyid, p_nonce, p_expires_at);
    UPDATE ${s}.replay_keyids k SET entries = v_entries + 1 WHERE k.keyid = p_keyid;
  END IF;
  RETURN 'stored';
END
$fn$;
`
}
