/**
 * Migration 4: no serial section per sender. Until version 3 every new nonce of a keyid and every new claim of a
 * scope locked that key's one counter row (`replay_keyids`, `claim_scopes`) until its transaction ended, so all
 * groups of one seller, in every process, committed one after the other. Now:
 *
 * - Exactness comes from the rows themselves: a nonce is inserted with `ON CONFLICT (keyid, nonce)` (a live row
 *   is a replay, an expired one is taken over), a new claim with `ON CONFLICT (namespace, scope, key) DO
 *   NOTHING` (a row found is decided as before, under its row lock). Two deliveries of the same nonce or key
 *   wait for each other on that index entry only; deliveries of other nonces and keys of the same seller never
 *   wait.
 * - Counters are striped per backend: `replay_key_counts` and `claim_scope_counts` hold one row per key and
 *   backend process id (`pg_backend_pid()`, unique among live backends), so a writer only ever locks its own
 *   row. The rows a key holds is the sum of its stripes. A stripe may go below zero (a sweep or an at-cap
 *   deletion subtracts what it deleted from its own stripe); the sum never does. The sweep folds the stripes
 *   of backends that are gone into stripe 0 (no backend has process id 0) and drops stripes at zero.
 * - Caps are checked against the sum, which is read only when needed: on a stripe's first insert, on every
 *   insert while the cap is below 1,024, otherwise when the writer's stripe reaches a multiple of
 *   step = ⌈cap / 1,024⌉, and on every insert of a stripe that last found its key near the cap (`near`: within
 *   step × the key's stripes of it). Between two of its reads a stripe inserts fewer than step rows, so by the
 *   time a key is within that margin every stripe reads the sum on each insert: the cap holds exactly for
 *   committed writers. Transactions still open see only their own rows and committed ones, so concurrent
 *   writers pass a cap by at most the inserts of the transactions open at the same moment (one fewer than the
 *   connections, for single deliveries), never a share of the cap.
 * - At the cap the key's expired rows are deleted first, as before (by the writer, subtracted from its
 *   stripe); a writer still over the cap deletes the row it inserted and answers `capacity`.
 *
 * Behaviour kept: outcomes and their order are those of version 3 (`replayed` before `capacity`, `conflict`,
 * `completed` and `processing` answered without a lock), an expired nonce or claim of the same key is taken
 * over in place and checked against the cap like a new one (the live rows grow by one).
 *
 * Lock order and deadlocks: a group decides its deliveries in the caller's order (keyid, scope, task);
 * the locks a delivery takes are its own nonce's index entry, its claim key, its task's terminal row and its
 * notification claim. Two groups wait for each other only on a shared nonce, claim key, task or notification,
 * and shared nonces and keys belong to copies of one delivery; the counters take no lock another backend
 * wants. A deadlock left by an unusual crossing is retried by the store as a whole group (40P01).
 */
export function stripedCountersSchema(schema: string): string {
  const s = schema
  return `
CREATE TABLE ${s}.replay_key_counts (
  keyid text NOT NULL,
  stripe integer NOT NULL,
  entries bigint NOT NULL,
  near boolean NOT NULL DEFAULT false,
  PRIMARY KEY (keyid, stripe)
);
INSERT INTO ${s}.replay_key_counts (keyid, stripe, entries) SELECT keyid, 0, entries FROM ${s}.replay_keyids;
DROP TABLE ${s}.replay_keyids;

CREATE TABLE ${s}.claim_scope_counts (
  namespace text NOT NULL,
  scope text NOT NULL,
  stripe integer NOT NULL,
  records bigint NOT NULL,
  near boolean NOT NULL DEFAULT false,
  PRIMARY KEY (namespace, scope, stripe)
);
INSERT INTO ${s}.claim_scope_counts (namespace, scope, stripe, records)
  SELECT namespace, scope, 0, records FROM ${s}.claim_scopes;
DROP TABLE ${s}.claim_scopes;

-- Whether a writer whose stripe now holds p_entries (p_near: the key was near its cap when this stripe last
-- read its sum) must read the key's sum against p_cap.
CREATE FUNCTION ${s}.cap_check_due(p_entries bigint, p_near boolean, p_cap bigint) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $fn$
  SELECT p_cap IS NOT NULL AND (p_near OR p_entries = 1 OR p_cap < 1024 OR p_entries % ((p_cap + 1023) / 1024) = 0)
$fn$;

CREATE OR REPLACE FUNCTION ${s}.remember_nonce(
  p_keyid text, p_nonce text, p_expires_at double precision, p_cap bigint, p_now double precision
) RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  v_inserted boolean;
  v_entries bigint;
  v_near boolean := false;
  v_total bigint;
  v_stripes bigint;
  v_margin bigint;
  v_deleted bigint;
  v_stripe integer := pg_backend_pid();
BEGIN
  -- A live row of this nonce is a replay; an expired one is taken over (the rows held are unchanged, the live
  -- ones one more, so the cap is checked as for a new row); otherwise a new row, counted on this stripe.
  INSERT INTO ${s}.replay_nonces AS n (keyid, nonce, expires_at) VALUES (p_keyid, p_nonce, p_expires_at)
    ON CONFLICT (keyid, nonce) DO UPDATE SET expires_at = excluded.expires_at WHERE n.expires_at <= p_now
    RETURNING (n.xmax = 0) INTO v_inserted;
  IF NOT FOUND THEN
    RETURN 'replayed';
  END IF;
  IF v_inserted THEN
    INSERT INTO ${s}.replay_key_counts AS k (keyid, stripe, entries) VALUES (p_keyid, v_stripe, 1)
      ON CONFLICT (keyid, stripe) DO UPDATE SET entries = k.entries + 1
      RETURNING k.entries, k.near INTO v_entries, v_near;
    IF NOT ${s}.cap_check_due(v_entries, v_near, p_cap) THEN
      RETURN 'stored';
    END IF;
  ELSIF p_cap IS NULL THEN
    RETURN 'stored';
  END IF;
  SELECT sum(k.entries), count(*) INTO v_total, v_stripes FROM ${s}.replay_key_counts k WHERE k.keyid = p_keyid;
  v_margin := CASE WHEN p_cap < 1024 THEN 0 ELSE v_stripes * ((p_cap + 1023) / 1024) END;
  IF v_total > p_cap THEN
    -- At the cap: this key's expired rows go first (the sweep's work, done now); still over, the row goes too.
    DELETE FROM ${s}.replay_nonces n WHERE n.keyid = p_keyid AND n.expires_at <= p_now;
    GET DIAGNOSTICS v_deleted = ROW_COUNT;
    v_total := v_total - v_deleted;
    IF v_total > p_cap THEN
      DELETE FROM ${s}.replay_nonces n WHERE n.keyid = p_keyid AND n.nonce = p_nonce;
      v_deleted := v_deleted + 1;
    END IF;
    INSERT INTO ${s}.replay_key_counts AS k (keyid, stripe, entries, near)
      VALUES (p_keyid, v_stripe, -v_deleted, v_total >= p_cap - v_margin)
      ON CONFLICT (keyid, stripe) DO UPDATE SET entries = k.entries + excluded.entries, near = excluded.near;
    IF v_total > p_cap THEN
      RETURN 'capacity';
    END IF;
  ELSIF (v_total >= p_cap - v_margin) <> v_near THEN
    INSERT INTO ${s}.replay_key_counts AS k (keyid, stripe, entries, near) VALUES (p_keyid, v_stripe, 0, NOT v_near)
      ON CONFLICT (keyid, stripe) DO UPDATE SET near = excluded.near;
  END IF;
  RETURN 'stored';
END
$fn$;

-- One claim, one round trip. Outcomes: claimed, takeover, processing, completed, conflict, capacity.
CREATE OR REPLACE FUNCTION ${s}.claim(
  p_namespace text, p_scope text, p_key text, p_fingerprint text, p_fence text, p_now double precision,
  p_lease_seconds double precision, p_retention_seconds double precision, p_max_per_scope bigint
) RETURNS TABLE (o_outcome text, o_lease_until double precision, o_result text)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_row ${s}.claims%ROWTYPE;
  v_locked boolean := false;
  v_inserted boolean := false;
  v_records bigint;
  v_near boolean := false;
  v_total bigint;
  v_stripes bigint;
  v_margin bigint;
  v_deleted bigint;
  v_stripe integer := pg_backend_pid();
BEGIN
  LOOP
    IF v_locked THEN
      SELECT * INTO v_row FROM ${s}.claims c
        WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key FOR UPDATE;
    ELSE
      SELECT * INTO v_row FROM ${s}.claims c
        WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key;
    END IF;
    IF FOUND THEN
      IF v_row.expires_at > p_now THEN
        -- A live record. Its fingerprint never changes and completion is final, so these answers need no lock
        -- (the common duplicate stays a read); only a takeover decides under the row lock.
        IF v_row.fingerprint <> p_fingerprint THEN
          RETURN QUERY SELECT 'conflict'::text, NULL::double precision, NULL::text;
          RETURN;
        ELSIF v_row.state = 'completed' THEN
          RETURN QUERY SELECT 'completed'::text, NULL::double precision, v_row.result;
          RETURN;
        ELSIF v_row.lease_until > p_now THEN
          RETURN QUERY SELECT 'processing'::text, v_row.lease_until, NULL::text;
          RETURN;
        ELSIF v_locked THEN
          UPDATE ${s}.claims c SET fence = p_fence, lease_until = p_now + p_lease_seconds
            WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key;
          RETURN QUERY SELECT 'takeover'::text, p_now + p_lease_seconds, NULL::text;
          RETURN;
        END IF;
      ELSIF v_locked THEN
        -- An expired record of this key: start it afresh (its retention runs from now). The rows held are
        -- unchanged, the live ones one more: the cap is checked as for a new record.
        UPDATE ${s}.claims c SET fingerprint = p_fingerprint, state = 'processing', fence = p_fence,
            lease_until = p_now + p_lease_seconds, expires_at = p_now + p_retention_seconds, result = NULL
          WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key;
        EXIT;
      END IF;
      v_locked := true;
      CONTINUE;
    END IF;
    -- No record: insert one. A concurrent insert of the same key makes this wait for its transaction; a row
    -- then present is decided above, under its lock.
    INSERT INTO ${s}.claims (namespace, scope, key, fingerprint, state, fence, lease_until, expires_at, result)
      VALUES (p_namespace, p_scope, p_key, p_fingerprint, 'processing', p_fence, p_now + p_lease_seconds,
              p_now + p_retention_seconds, NULL)
      ON CONFLICT (namespace, scope, key) DO NOTHING;
    v_inserted := FOUND;
    EXIT WHEN v_inserted;
    v_locked := true;
  END LOOP;

  IF v_inserted THEN
    INSERT INTO ${s}.claim_scope_counts AS k (namespace, scope, stripe, records)
      VALUES (p_namespace, p_scope, v_stripe, 1)
      ON CONFLICT (namespace, scope, stripe) DO UPDATE SET records = k.records + 1
      RETURNING k.records, k.near INTO v_records, v_near;
  END IF;
  IF (v_inserted AND ${s}.cap_check_due(v_records, v_near, p_max_per_scope))
     OR (NOT v_inserted AND p_max_per_scope IS NOT NULL) THEN
    SELECT sum(k.records), count(*) INTO v_total, v_stripes FROM ${s}.claim_scope_counts k
      WHERE k.namespace = p_namespace AND k.scope = p_scope;
    v_margin := CASE WHEN p_max_per_scope < 1024 THEN 0 ELSE v_stripes * ((p_max_per_scope + 1023) / 1024) END;
    IF v_total > p_max_per_scope THEN
      DELETE FROM ${s}.claims c WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.expires_at <= p_now;
      GET DIAGNOSTICS v_deleted = ROW_COUNT;
      v_total := v_total - v_deleted;
      IF v_total > p_max_per_scope THEN
        DELETE FROM ${s}.claims c WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key;
        v_deleted := v_deleted + 1;
      END IF;
      INSERT INTO ${s}.claim_scope_counts AS k (namespace, scope, stripe, records, near)
        VALUES (p_namespace, p_scope, v_stripe, -v_deleted, v_total >= p_max_per_scope - v_margin)
        ON CONFLICT (namespace, scope, stripe) DO UPDATE SET records = k.records + excluded.records,
          near = excluded.near;
      IF v_total > p_max_per_scope THEN
        RETURN QUERY SELECT 'capacity'::text, NULL::double precision, NULL::text;
        RETURN;
      END IF;
    ELSIF (v_total >= p_max_per_scope - v_margin) <> v_near THEN
      INSERT INTO ${s}.claim_scope_counts AS k (namespace, scope, stripe, records, near)
        VALUES (p_namespace, p_scope, v_stripe, 0, NOT v_near)
        ON CONFLICT (namespace, scope, stripe) DO UPDATE SET near = excluded.near;
    END IF;
  END IF;
  RETURN QUERY SELECT 'claimed'::text, p_now + p_lease_seconds, NULL::text;
END
$fn$;
`
}
