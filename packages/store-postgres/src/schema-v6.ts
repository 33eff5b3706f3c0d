/**
 * Migration 6: claims, terminal records and replay nonces (with their counters) partitioned by generation, so
 * that they expire by dropping whole partitions instead of deleting row by row (see `generations.ts` for the
 * maintenance).
 *
 * Why generations and not time ranges: a unique index of a partitioned table must include the partition
 * column, so `ON CONFLICT (namespace, scope, key)` could no longer decide a key across time partitions. Rows
 * go instead to the partition of the current *generation* of their family (LIST partitions of an integer
 * `generation` column), whatever their own expiry:
 *
 * - Three families, each with a SEQUENCE holding its current generation: `claims_generation` (claims and
 *   `claim_scope_counts`), `terminals_generation` (terminals) and `replay_generation` (replay_nonces and
 *   `replay_key_counts`). `SELECT last_value` of a sequence is not bound to the transaction's snapshot.
 * - Every decision (`claim`, `remember_nonce`, `observe_terminal`, hence every delivery of an inbox group) first
 *   takes `pg_advisory_xact_lock_shared` on its family's key, then reads the generation. Shared advisory locks
 *   never conflict with each other: writers never wait on each other for it.
 * - Maintenance advances a generation ("rotation") under the same key taken exclusively, under a lock timeout
 *   of 100 ms (a rotation that would wait longer gives up until the next sweep, so writers are held back at most
 *   that long). It makes sure the partitions of the next two generations exist first. When it commits, every
 *   transaction that used the old generation has committed, and every transaction that reads the new one
 *   began after that.
 * - A decision looks the key up in every partition of its table up to the current generation (one index probe
 *   each: the partitions still attached are those that may hold live rows; the two ahead are skipped when the
 *   cached generic plan starts, as no row can be there: a rotation past this generation waits for this
 *   transaction's shared key, and a writer writes only to the generation it read under it). The current
 *   generation's partition is probed by the insert of the new row itself (`ON CONFLICT DO NOTHING`), the common
 *   case; only a key already there is looked up again, up to the current generation (a key has at most one row,
 *   so whichever partition holds it, the decision is the same; the lookup takes the first row it finds, with no
 *   ordering by generation nor a LIMIT node to set up on every call). At READ COMMITTED each statement's
 *   snapshot comes after the lock, so the rows of older generations are seen, and concurrent writers of the
 *   current generation meet on that partition's primary key (the key columns and the generation) exactly as
 *   they met on the key before. At REPEATABLE READ and SERIALIZABLE the transaction's snapshot may predate the
 *   lock, and so the rotation, and miss rows the previous generation committed just before it: the rotation
 *   also writes the new generation into `generation_clock`, in its transaction, and a decision whose snapshot
 *   does not see it there fails with SQLSTATE 40001 (the stores run the transaction again, with a new
 *   snapshot). Probing the partition of the next generation would make such a crossing a read-write cycle that
 *   SERIALIZABLE aborts anyway, but REPEATABLE READ has no such check: without this one, two copies of a key
 *   could each win, one in each generation (tested).
 * - A key found live in an older generation is decided there as before (duplicate, conflict, completed,
 *   processing, takeover of the lease under the row lock: none of these changes `expires_at`). An expired row
 *   of an older generation that is taken over moves to the current generation (deleted and inserted under its
 *   row lock), so that dropping an old partition never drops a live row. A key has at most one row.
 * - Counters are per generation: `claim_scope_counts (namespace, scope, generation, stripe)` and
 *   `replay_key_counts (keyid, generation, stripe)`, each partitioned with its rows' table, each counting the
 *   rows of its generation (a moved row is subtracted from its old generation and added to the new one, on the
 *   writer's own stripe). The rows a key holds is the sum over the attached generations; caps, their read
 *   schedule and their concurrent-overshoot bound are migration 4's, the stripes of the margin being those
 *   that wrote in the current generation (a stripe's first insert of a generation always reads the sum).
 * - A generation's partitions (rows and counters together) are dropped once the generation is no longer
 *   current and none of its rows is live (`max(expires_at)` from the expiry index): the cost of expiring does
 *   not grow with the rows expired. The sweep no longer deletes expired rows; a writer at a cap still deletes
 *   its key's expired rows first, as before.
 *
 * The rows of version 5 (live or expired but not yet swept: the migration has no clock) are copied into
 * generation 1 and their counters recomputed per key, on stripe 0. Generation 1 is current, 2 and 3 exist
 * ahead. `generation_clock` holds each family's current generation (as of the snapshot: the sequence holds
 * it for everyone at once), when it began (the caller's Unix seconds, set by the first maintenance) and, for claims, the latest time a sweep ran for (`swept_until`): a claim
 * expired by then is one the sweep deleted until version 5, so completing it answers false as it did then,
 * although its row waits for its generation's partition.
 *
 * Distribution (Citus): unchanged, and still named with `=` by every statement: `claims.scope` and
 * `claim_scope_counts.scope` (the sender, colocated), `terminals.sender`, `replay_nonces.keyid` and
 * `replay_key_counts.keyid` (colocated). The generation is a partition column beside it, never a distribution
 * one; `generation_clock` is the maintenance's own (a reference table).
 */
export function generationsSchema(schema: string): string {
  const s = schema
  return `
ALTER TABLE ${s}.claims RENAME TO claims_v5;
ALTER TABLE ${s}.claim_scope_counts RENAME TO claim_scope_counts_v5;
ALTER TABLE ${s}.terminals RENAME TO terminals_v5;
ALTER TABLE ${s}.replay_nonces RENAME TO replay_nonces_v5;
ALTER TABLE ${s}.replay_key_counts RENAME TO replay_key_counts_v5;

CREATE SEQUENCE ${s}.claims_generation;
CREATE SEQUENCE ${s}.terminals_generation;
CREATE SEQUENCE ${s}.replay_generation;
SELECT setval('${s}.claims_generation', 1, true), setval('${s}.terminals_generation', 1, true),
  setval('${s}.replay_generation', 1, true);

CREATE TABLE ${s}.generation_clock (
  family text PRIMARY KEY,
  generation bigint NOT NULL DEFAULT 1,
  started_at double precision,
  swept_until double precision
);
INSERT INTO ${s}.generation_clock (family) VALUES ('claims'), ('terminals'), ('replay');

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
  generation bigint NOT NULL
) PARTITION BY LIST (generation);

CREATE TABLE ${s}.claim_scope_counts (
  namespace text NOT NULL,
  scope text NOT NULL,
  generation bigint NOT NULL,
  stripe integer NOT NULL,
  records bigint NOT NULL,
  near boolean NOT NULL DEFAULT false
) PARTITION BY LIST (generation);

CREATE TABLE ${s}.terminals (
  sender text NOT NULL,
  task_id text NOT NULL,
  comparison text NOT NULL,
  state text NOT NULL CHECK (state IN ('publishing', 'published')),
  owner text NOT NULL,
  lease_until double precision NOT NULL,
  expires_at double precision NOT NULL,
  generation bigint NOT NULL
) PARTITION BY LIST (generation);

CREATE TABLE ${s}.replay_nonces (
  keyid text NOT NULL,
  nonce text NOT NULL,
  expires_at double precision NOT NULL,
  generation bigint NOT NULL
) PARTITION BY LIST (generation);

CREATE TABLE ${s}.replay_key_counts (
  keyid text NOT NULL,
  generation bigint NOT NULL,
  stripe integer NOT NULL,
  entries bigint NOT NULL,
  near boolean NOT NULL DEFAULT false
) PARTITION BY LIST (generation);

${[1, 2, 3]
  .flatMap((generation) =>
    ['claims', 'claim_scope_counts', 'terminals', 'replay_nonces', 'replay_key_counts'].map(
      (table) =>
        `CREATE TABLE ${s}.${table}_g${generation} PARTITION OF ${s}.${table} FOR VALUES IN (${generation});`,
    ),
  )
  .join('\n')}

INSERT INTO ${s}.claims (namespace, scope, key, fingerprint, state, fence, lease_until, expires_at, result, generation)
  SELECT namespace, scope, key, fingerprint, state, fence, lease_until, expires_at, result, 1 FROM ${s}.claims_v5;
INSERT INTO ${s}.claim_scope_counts (namespace, scope, generation, stripe, records)
  SELECT namespace, scope, 1, 0, count(*) FROM ${s}.claims_v5 GROUP BY namespace, scope;
INSERT INTO ${s}.terminals (sender, task_id, comparison, state, owner, lease_until, expires_at, generation)
  SELECT sender, task_id, comparison, state, owner, lease_until, expires_at, 1 FROM ${s}.terminals_v5;
INSERT INTO ${s}.replay_nonces (keyid, nonce, expires_at, generation)
  SELECT keyid, nonce, expires_at, 1 FROM ${s}.replay_nonces_v5;
INSERT INTO ${s}.replay_key_counts (keyid, generation, stripe, entries)
  SELECT keyid, 1, 0, count(*) FROM ${s}.replay_nonces_v5 GROUP BY keyid;

DROP TABLE ${s}.claims_v5, ${s}.claim_scope_counts_v5, ${s}.terminals_v5, ${s}.replay_nonces_v5,
  ${s}.replay_key_counts_v5;

ALTER TABLE ${s}.claims ADD PRIMARY KEY (namespace, scope, key, generation);
CREATE INDEX claims_expiry ON ${s}.claims (expires_at);
ALTER TABLE ${s}.claim_scope_counts ADD PRIMARY KEY (namespace, scope, generation, stripe);
ALTER TABLE ${s}.terminals ADD PRIMARY KEY (sender, task_id, generation);
CREATE INDEX terminals_expiry ON ${s}.terminals (expires_at);
ALTER TABLE ${s}.replay_nonces ADD PRIMARY KEY (keyid, nonce, generation);
CREATE INDEX replay_nonces_expiry ON ${s}.replay_nonces (expires_at);
ALTER TABLE ${s}.replay_key_counts ADD PRIMARY KEY (keyid, generation, stripe);

-- p_older false (inbox_accept_group's, true otherwise): the caller found no row of this nonce in the older
-- generations under the family's shared key, which keeps it so (see inboxAcceptGroup): the lookup starts with
-- the insert.
DROP FUNCTION ${s}.remember_nonce(text, text, double precision, bigint, double precision);
CREATE FUNCTION ${s}.remember_nonce(
  p_keyid text, p_nonce text, p_expires_at double precision, p_cap bigint, p_now double precision,
  p_older boolean DEFAULT true
) RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  v_skip boolean := NOT p_older;
  v_found boolean;
  v_generation bigint;
  v_upto bigint;
  v_held boolean;
  v_found_generation bigint;
  v_expires double precision;
  v_inserted boolean := false;
  v_entries bigint;
  v_near boolean := false;
  v_total bigint;
  v_stripes bigint;
  v_margin bigint;
  v_deleted bigint;
  v_own bigint := 0;
  v_stripe integer := pg_backend_pid();
BEGIN
${generationPrologue(s, 'replay', 'replay_generation')}
  -- The lookup first skips the current generation: a new key, the common case, is inserted there at once and
  -- that insert is its probe of that partition. Only a conflict there (the key is in the current generation)
  -- looks again up to it.
  v_upto := v_generation - 1;
  LOOP
    IF v_skip THEN
      v_skip := false;
      v_found := false;
    ELSE
      SELECT n.expires_at, n.generation INTO v_expires, v_found_generation FROM ${s}.replay_nonces n
        WHERE n.keyid = p_keyid AND n.nonce = p_nonce AND n.generation <= v_upto;
      v_found := FOUND;
    END IF;
    IF NOT v_found THEN
      -- A new row in the current generation. A concurrent insert of the same nonce makes this wait for its
      -- transaction; the row then present is decided below.
      INSERT INTO ${s}.replay_nonces (keyid, nonce, expires_at, generation)
        VALUES (p_keyid, p_nonce, p_expires_at, v_generation) ON CONFLICT DO NOTHING;
      v_inserted := FOUND;
      EXIT WHEN v_inserted;
      v_upto := v_generation;
      CONTINUE;
    END IF;
    IF v_expires > p_now THEN
      RETURN 'replayed';
    END IF;
    IF v_found_generation >= v_generation THEN
      -- Expired, in the current generation: taken over in place (the rows held are unchanged, the live ones
      -- one more, so the cap is checked as for a new row).
      UPDATE ${s}.replay_nonces n SET expires_at = p_expires_at
        WHERE n.keyid = p_keyid AND n.nonce = p_nonce AND n.generation = v_found_generation
          AND n.expires_at <= p_now;
      EXIT WHEN FOUND;
      CONTINUE;
    END IF;
    -- Expired, in an older generation: taken over by moving it to the current one, under its row lock.
    DELETE FROM ${s}.replay_nonces n
      WHERE n.keyid = p_keyid AND n.nonce = p_nonce AND n.generation = v_found_generation AND n.expires_at <= p_now;
    IF FOUND THEN
      INSERT INTO ${s}.replay_nonces (keyid, nonce, expires_at, generation)
        VALUES (p_keyid, p_nonce, p_expires_at, v_generation) ON CONFLICT DO NOTHING;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'nonce % of keyid % was written concurrently', p_nonce, p_keyid
          USING ERRCODE = 'serialization_failure';
      END IF;
      INSERT INTO ${s}.replay_key_counts AS k (keyid, generation, stripe, entries)
        VALUES (p_keyid, v_found_generation, v_stripe, -1), (p_keyid, v_generation, v_stripe, 1)
        ON CONFLICT (keyid, generation, stripe) DO UPDATE SET entries = k.entries + excluded.entries;
      EXIT;
    END IF;
    -- Moved or renewed by another writer meanwhile: look again.
  END LOOP;
  IF v_inserted THEN
    -- This backend's own stripe (no other writer adds to it): updated where it exists, which needs no tuple
    -- routing nor the arbiter lookups of an upsert through the parent; inserted once per generation.
    UPDATE ${s}.replay_key_counts k SET entries = k.entries + 1
      WHERE k.keyid = p_keyid AND k.generation = v_generation AND k.stripe = v_stripe
      RETURNING k.entries, k.near INTO v_entries, v_near;
    IF NOT FOUND THEN
      INSERT INTO ${s}.replay_key_counts AS k (keyid, generation, stripe, entries)
        VALUES (p_keyid, v_generation, v_stripe, 1)
        ON CONFLICT (keyid, generation, stripe) DO UPDATE SET entries = k.entries + 1
        RETURNING k.entries, k.near INTO v_entries, v_near;
    END IF;
    IF NOT ${s}.cap_check_due(v_entries, v_near, p_cap) THEN
      RETURN 'stored';
    END IF;
  ELSIF p_cap IS NULL THEN
    RETURN 'stored';
  END IF;
  SELECT sum(k.entries), count(*) FILTER (WHERE k.generation = v_generation) INTO v_total, v_stripes
    FROM ${s}.replay_key_counts k WHERE k.keyid = p_keyid;
  v_margin := CASE WHEN p_cap < 1024 THEN 0 ELSE v_stripes * ((p_cap + 1023) / 1024) END;
  IF v_total > p_cap THEN
    -- At the cap: this key's expired rows go first (subtracted from this stripe of their generations); still
    -- over, the row goes too.
    WITH deleted AS (
      DELETE FROM ${s}.replay_nonces n WHERE n.keyid = p_keyid AND n.expires_at <= p_now RETURNING n.generation
    ),
    counts AS (SELECT d.generation, count(*) AS n FROM deleted d GROUP BY d.generation),
    subtracted AS (
      INSERT INTO ${s}.replay_key_counts AS k (keyid, generation, stripe, entries)
        SELECT p_keyid, c.generation, v_stripe, -c.n FROM counts c
        ON CONFLICT (keyid, generation, stripe) DO UPDATE SET entries = k.entries + excluded.entries
    )
    SELECT coalesce(sum(c.n), 0) INTO v_deleted FROM counts c;
    v_total := v_total - v_deleted;
    IF v_total > p_cap THEN
      DELETE FROM ${s}.replay_nonces n WHERE n.keyid = p_keyid AND n.nonce = p_nonce AND n.generation = v_generation;
      v_own := 1;
    END IF;
    INSERT INTO ${s}.replay_key_counts AS k (keyid, generation, stripe, entries, near)
      VALUES (p_keyid, v_generation, v_stripe, -v_own, v_total >= p_cap - v_margin)
      ON CONFLICT (keyid, generation, stripe) DO UPDATE SET entries = k.entries + excluded.entries,
        near = excluded.near;
    IF v_total > p_cap THEN
      RETURN 'capacity';
    END IF;
  ELSIF (v_total >= p_cap - v_margin) <> v_near THEN
    INSERT INTO ${s}.replay_key_counts AS k (keyid, generation, stripe, entries, near)
      VALUES (p_keyid, v_generation, v_stripe, 0, NOT v_near)
      ON CONFLICT (keyid, generation, stripe) DO UPDATE SET near = excluded.near;
  END IF;
  RETURN 'stored';
END
$fn$;

-- One claim, one round trip. Outcomes: claimed, takeover, processing, completed, conflict, capacity; a claim
-- claimed or taken over also names the generation its row is in (it holds the row's lock, so the row stays
-- there until this transaction ends), for inbox_accept to update that partition alone. OUT parameters (one
-- row, as before) rather than a table: inbox_accept calls it as a simple expression, without a function scan.
-- p_settle (inbox_accept's, false otherwise): a claim claimed or taken over is written completed at once (result
-- null), which is where inbox_accept leaves it whatever follows in its transaction but a convergence conflict or
-- in_progress (it then gives the claim back, processing with no lease): one statement less per delivery.
-- p_older: as remember_nonce's.
DROP FUNCTION ${s}.claim(text, text, text, text, text, double precision, double precision, double precision, bigint);
CREATE FUNCTION ${s}.claim(
  p_namespace text, p_scope text, p_key text, p_fingerprint text, p_fence text, p_now double precision,
  p_lease_seconds double precision, p_retention_seconds double precision, p_max_per_scope bigint,
  p_settle boolean DEFAULT false, p_older boolean DEFAULT true,
  OUT o_outcome text, OUT o_lease_until double precision, OUT o_result text, OUT o_generation bigint
)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_row ${s}.claims%ROWTYPE;
  v_generation bigint;
  v_upto bigint;
  v_held boolean;
  v_locked boolean := false;
  v_inserted boolean := false;
  v_records bigint;
  v_near boolean := false;
  v_total bigint;
  v_stripes bigint;
  v_margin bigint;
  v_deleted bigint;
  v_own bigint := 0;
  v_stripe integer := pg_backend_pid();
  v_state text := CASE WHEN p_settle THEN 'completed' ELSE 'processing' END;
  v_skip boolean := NOT p_older;
  v_found boolean;
BEGIN
${generationPrologue(s, 'claims', 'claims_generation')}
  -- The lookup first skips the current generation: a new key, the common case, is inserted there at once and
  -- that insert is its probe of that partition. Only a conflict there (the key is in the current generation)
  -- looks again up to it.
  v_upto := v_generation - 1;
  LOOP
    IF v_skip THEN
      v_skip := false;
      v_found := false;
    ELSIF v_locked THEN
      SELECT * INTO v_row FROM ${s}.claims c
        WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key AND c.generation <= v_upto FOR UPDATE;
      v_found := FOUND;
    ELSE
      SELECT * INTO v_row FROM ${s}.claims c
        WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key AND c.generation <= v_upto;
      v_found := FOUND;
    END IF;
    IF v_found THEN
      IF v_row.expires_at > p_now THEN
        -- A live record, in whichever generation. Its fingerprint never changes and completion is final, so
        -- these answers need no lock (the common duplicate stays a read); only a takeover decides under the
        -- row lock, and it leaves the record in its generation (its expiry is unchanged).
        IF v_row.fingerprint <> p_fingerprint THEN
          o_outcome := 'conflict'::text;
          o_lease_until := NULL::double precision;
          o_result := NULL::text;
          o_generation := NULL::bigint;
          RETURN;
        ELSIF v_row.state = 'completed' THEN
          o_outcome := 'completed'::text;
          o_lease_until := NULL::double precision;
          o_result := v_row.result;
          o_generation := NULL::bigint;
          RETURN;
        ELSIF v_row.lease_until > p_now THEN
          o_outcome := 'processing'::text;
          o_lease_until := v_row.lease_until;
          o_result := NULL::text;
          o_generation := NULL::bigint;
          RETURN;
        ELSIF v_locked THEN
          UPDATE ${s}.claims c SET fence = p_fence, lease_until = p_now + p_lease_seconds, state = v_state,
              result = NULL
            WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key
              AND c.generation = v_row.generation;
          o_outcome := 'takeover'::text;
          o_lease_until := p_now + p_lease_seconds;
          o_result := NULL::text;
          o_generation := v_row.generation;
          RETURN;
        END IF;
      ELSIF v_locked THEN
        -- An expired record of this key: start it afresh (its retention runs from now), in the current
        -- generation. The rows held are unchanged, the live ones one more: the cap is checked as for a new one.
        IF v_row.generation >= v_generation THEN
          UPDATE ${s}.claims c SET fingerprint = p_fingerprint, state = v_state, fence = p_fence,
              lease_until = p_now + p_lease_seconds, expires_at = p_now + p_retention_seconds, result = NULL
            WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key
              AND c.generation = v_row.generation;
        ELSE
          DELETE FROM ${s}.claims c
            WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key
              AND c.generation = v_row.generation;
          INSERT INTO ${s}.claims (namespace, scope, key, fingerprint, state, fence, lease_until, expires_at,
              result, generation)
            VALUES (p_namespace, p_scope, p_key, p_fingerprint, v_state, p_fence, p_now + p_lease_seconds,
                    p_now + p_retention_seconds, NULL, v_generation)
            ON CONFLICT DO NOTHING;
          IF NOT FOUND THEN
            RAISE EXCEPTION 'claim % of scope % was written concurrently', p_key, p_scope
              USING ERRCODE = 'serialization_failure';
          END IF;
          INSERT INTO ${s}.claim_scope_counts AS k (namespace, scope, generation, stripe, records)
            VALUES (p_namespace, p_scope, v_row.generation, v_stripe, -1),
                   (p_namespace, p_scope, v_generation, v_stripe, 1)
            ON CONFLICT (namespace, scope, generation, stripe) DO UPDATE SET records = k.records + excluded.records;
        END IF;
        EXIT;
      END IF;
      v_locked := true;
      CONTINUE;
    END IF;
    -- No record: insert one in the current generation. A concurrent insert of the same key makes this wait for
    -- its transaction; a row then present is decided above, under its lock. No conflict target: the primary
    -- key is the partition's only unique index, so it is the arbiter all the same, and a target named through
    -- the parent costs every routed insert a catalog lookup per index of the partition.
    INSERT INTO ${s}.claims (namespace, scope, key, fingerprint, state, fence, lease_until, expires_at, result,
        generation)
      VALUES (p_namespace, p_scope, p_key, p_fingerprint, v_state, p_fence, p_now + p_lease_seconds,
              p_now + p_retention_seconds, NULL, v_generation)
      ON CONFLICT DO NOTHING;
    v_inserted := FOUND;
    EXIT WHEN v_inserted;
    v_locked := true;
    v_upto := v_generation;
  END LOOP;

  IF v_inserted THEN
    -- As remember_nonce's: this backend's stripe updated where it exists, inserted once per generation.
    UPDATE ${s}.claim_scope_counts k SET records = k.records + 1
      WHERE k.namespace = p_namespace AND k.scope = p_scope AND k.generation = v_generation AND k.stripe = v_stripe
      RETURNING k.records, k.near INTO v_records, v_near;
    IF NOT FOUND THEN
      INSERT INTO ${s}.claim_scope_counts AS k (namespace, scope, generation, stripe, records)
        VALUES (p_namespace, p_scope, v_generation, v_stripe, 1)
        ON CONFLICT (namespace, scope, generation, stripe) DO UPDATE SET records = k.records + 1
        RETURNING k.records, k.near INTO v_records, v_near;
    END IF;
  END IF;
  IF (v_inserted AND ${s}.cap_check_due(v_records, v_near, p_max_per_scope))
     OR (NOT v_inserted AND p_max_per_scope IS NOT NULL) THEN
    SELECT sum(k.records), count(*) FILTER (WHERE k.generation = v_generation) INTO v_total, v_stripes
      FROM ${s}.claim_scope_counts k WHERE k.namespace = p_namespace AND k.scope = p_scope;
    v_margin := CASE WHEN p_max_per_scope < 1024 THEN 0 ELSE v_stripes * ((p_max_per_scope + 1023) / 1024) END;
    IF v_total > p_max_per_scope THEN
      WITH deleted AS (
        DELETE FROM ${s}.claims c WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.expires_at <= p_now
        RETURNING c.generation
      ),
      counts AS (SELECT d.generation, count(*) AS n FROM deleted d GROUP BY d.generation),
      subtracted AS (
        INSERT INTO ${s}.claim_scope_counts AS k (namespace, scope, generation, stripe, records)
          SELECT p_namespace, p_scope, c.generation, v_stripe, -c.n FROM counts c
          ON CONFLICT (namespace, scope, generation, stripe) DO UPDATE SET records = k.records + excluded.records
      )
      SELECT coalesce(sum(c.n), 0) INTO v_deleted FROM counts c;
      v_total := v_total - v_deleted;
      IF v_total > p_max_per_scope THEN
        DELETE FROM ${s}.claims c WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key
          AND c.generation = v_generation;
        v_own := 1;
      END IF;
      INSERT INTO ${s}.claim_scope_counts AS k (namespace, scope, generation, stripe, records, near)
        VALUES (p_namespace, p_scope, v_generation, v_stripe, -v_own, v_total >= p_max_per_scope - v_margin)
        ON CONFLICT (namespace, scope, generation, stripe) DO UPDATE SET records = k.records + excluded.records,
          near = excluded.near;
      IF v_total > p_max_per_scope THEN
        o_outcome := 'capacity'::text;
        o_lease_until := NULL::double precision;
        o_result := NULL::text;
        o_generation := NULL::bigint;
        RETURN;
      END IF;
    ELSIF (v_total >= p_max_per_scope - v_margin) <> v_near THEN
      INSERT INTO ${s}.claim_scope_counts AS k (namespace, scope, generation, stripe, records, near)
        VALUES (p_namespace, p_scope, v_generation, v_stripe, 0, NOT v_near)
        ON CONFLICT (namespace, scope, generation, stripe) DO UPDATE SET near = excluded.near;
    END IF;
  END IF;
  -- Inserted, started afresh in place (found in the current generation) or moved to it: in the current one.
  o_outcome := 'claimed'::text;
  o_lease_until := p_now + p_lease_seconds;
  o_result := NULL::text;
  o_generation := v_generation;
END
$fn$;

-- A terminal observation of a task: the row as it stands after the decision (the upsert of version 5, across
-- generations). The row is taken over when it expired (moved to the current generation), or its lease when the
-- same outcome is still being published and its owner is this delivery or its lease ended. OUT parameters, as
-- claim's, with the generation the row is in (locked by this transaction). p_publish (inbox_accept's, false
-- otherwise): a row this observation takes (the outcome is then to proceed, the only one that writes the row) is
-- written published at once, which is where inbox_accept leaves it in the same transaction; the state
-- returned is still the one decided on (publishing). p_older: as remember_nonce's.
CREATE FUNCTION ${s}.observe_terminal(
  p_sender text, p_task_id text, p_comparison text, p_owner text, p_now double precision,
  p_lease_seconds double precision, p_retention_seconds double precision, p_publish boolean DEFAULT false,
  p_older boolean DEFAULT true,
  OUT o_comparison text, OUT o_state text, OUT o_owner text, OUT o_generation bigint
)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_row ${s}.terminals%ROWTYPE;
  v_generation bigint;
  v_upto bigint;
  v_held boolean;
  v_state text := CASE WHEN p_publish THEN 'published' ELSE 'publishing' END;
  v_skip boolean := NOT p_older;
  v_found boolean;
BEGIN
${generationPrologue(s, 'terminals', 'terminals_generation')}
  -- The lookup first skips the current generation: a new key, the common case, is inserted there at once and
  -- that insert is its probe of that partition. Only a conflict there (the key is in the current generation)
  -- looks again up to it.
  v_upto := v_generation - 1;
  LOOP
    IF v_skip THEN
      v_skip := false;
      v_found := false;
    ELSE
      SELECT * INTO v_row FROM ${s}.terminals t
        WHERE t.sender = p_sender AND t.task_id = p_task_id AND t.generation <= v_upto FOR UPDATE;
      v_found := FOUND;
    END IF;
    IF NOT v_found THEN
      -- No conflict target, as for claims: the primary key is the only unique index.
      INSERT INTO ${s}.terminals (sender, task_id, comparison, state, owner, lease_until, expires_at, generation)
        VALUES (p_sender, p_task_id, p_comparison, v_state, p_owner, p_now + p_lease_seconds,
                p_now + p_retention_seconds, v_generation)
        ON CONFLICT DO NOTHING;
      IF FOUND THEN
        o_comparison := p_comparison;
        o_state := 'publishing'::text;
        o_owner := p_owner;
        o_generation := v_generation;
        RETURN;
      END IF;
      -- In the current generation already (inserted concurrently, or found there): decided above, under its lock.
      v_upto := v_generation;
      CONTINUE;
    END IF;
    IF v_row.expires_at <= p_now THEN
      IF v_row.generation >= v_generation THEN
        UPDATE ${s}.terminals t SET comparison = p_comparison, state = v_state, owner = p_owner,
            lease_until = p_now + p_lease_seconds, expires_at = p_now + p_retention_seconds
          WHERE t.sender = p_sender AND t.task_id = p_task_id AND t.generation = v_row.generation;
      ELSE
        DELETE FROM ${s}.terminals t
          WHERE t.sender = p_sender AND t.task_id = p_task_id AND t.generation = v_row.generation;
        INSERT INTO ${s}.terminals (sender, task_id, comparison, state, owner, lease_until, expires_at, generation)
          VALUES (p_sender, p_task_id, p_comparison, v_state, p_owner, p_now + p_lease_seconds,
                  p_now + p_retention_seconds, v_generation)
          ON CONFLICT DO NOTHING;
        IF NOT FOUND THEN
          RAISE EXCEPTION 'terminal record % of sender % was written concurrently', p_task_id, p_sender
            USING ERRCODE = 'serialization_failure';
        END IF;
      END IF;
      o_comparison := p_comparison;
      o_state := 'publishing'::text;
      o_owner := p_owner;
      o_generation := v_generation;
      RETURN;
    END IF;
    IF v_row.comparison = p_comparison AND v_row.state = 'publishing'
       AND (v_row.owner = p_owner OR v_row.lease_until <= p_now) THEN
      UPDATE ${s}.terminals t SET owner = p_owner, lease_until = p_now + p_lease_seconds, state = v_state
        WHERE t.sender = p_sender AND t.task_id = p_task_id AND t.generation = v_row.generation;
      o_comparison := v_row.comparison;
      o_state := v_row.state;
      o_owner := p_owner;
      o_generation := v_row.generation;
      RETURN;
    END IF;
    o_comparison := v_row.comparison;
    o_state := v_row.state;
    o_owner := v_row.owner;
    o_generation := v_row.generation;
    RETURN;
  END LOOP;
END
$fn$;

${inboxAccept(s)}
`
}

/**
 * The start of a decision of `family`: its advisory key taken shared, then its current generation read (after
 * the key is held: a rotation waits for this transaction), then, at REPEATABLE READ and SERIALIZABLE, the check
 * that this transaction's snapshot sees that generation in `generation_clock`.
 *
 * Each step is one plpgsql simple expression (evaluated without starting the executor) wherever it can be:
 * `pg_sequence_last_value` reads the sequence's `last_value` as `SELECT last_value` does (it is set with
 * `is_called`, so never null), and the check's subquery runs only at those isolation levels instead of being
 * set up by every decision.
 */
function generationPrologue(s: string, family: string, sequence: string, variable = 'v_generation'): string {
  return `  v_held := pg_advisory_xact_lock_shared(hashtextextended('${s}/${family}', 0)) IS NOT NULL;
  ${variable} := pg_sequence_last_value('${s}.${sequence}'::regclass);
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    IF ${variable} IS DISTINCT FROM (SELECT c.generation FROM ${s}.generation_clock c WHERE c.family = '${family}') THEN
      -- This transaction's snapshot predates the rotation to the current generation: it could miss rows the
      -- previous generation committed meanwhile. Run again with a new snapshot.
      RAISE EXCEPTION 'the ${family} generation advanced after this transaction began'
        USING ERRCODE = 'serialization_failure';
    END IF;
  END IF;`
}

/**
 * `inbox_accept` of migration 3, with the terminal upsert replaced by `observe_terminal`, and `inbox_accept_group`.
 *
 * Fewer statements per delivery than migration 3's: the claim is written completed by `claim` itself
 * (`p_settle`) and a terminal record owned by the delivery's key published by `observe_terminal` (`p_publish`),
 * where both used to be updated once the delivery was decided: nothing else reads them in between, and every
 * outcome but a convergence conflict or in_progress (which gives the claim back, as before) leaves them so.
 * `inbox_accept` returns OUT parameters, and `inbox_accept_group` calls it as a plpgsql simple expression (no
 * function scan and tuplestore per delivery).
 *
 * `inbox_accept_group` takes the three families' shared keys first (in the decisions' order: replay, claims,
 * terminals; the snapshot check included) and then looks the whole group's nonces, claim keys, notification
 * keys and tasks up in the older generations, one statement a family (each key probed in each older
 * partition's primary key). While those keys are held no row can enter an older generation (writers write the
 * current one, which cannot advance; an expired row taken over moves out of its generation, never into one),
 * so a key found in none of them stays so for the whole transaction: its decision starts with the insert into
 * the current generation (`p_older` false), skipping the lookup a lone delivery makes. A key found there is
 * decided as a lone delivery's, including when an earlier delivery of the group moved it meanwhile.
 *
 * `plan_cache_mode = force_generic_plan` keeps the statements on their cached generic plans, which skip the
 * generations out of reach at executor start (run-time pruning). Left to choose, the plan cache would re-plan
 * each of them on every call, a custom plan being cheaper by its estimates (measured: the delivery then cost
 * more CPU than without the generation). The setting holds for the statements each call runs, nested decisions
 * included.
 */
function inboxAccept(s: string): string {
  return `
DROP FUNCTION ${s}.inbox_accept(text, text, double precision, bigint, text, text, text, text, text,
  double precision, double precision, double precision, bigint, text, text, boolean, text, text, double precision,
  double precision, double precision, text);
CREATE FUNCTION ${s}.inbox_accept(
  p_keyid text, p_nonce text, p_nonce_expires_at double precision, p_nonce_cap bigint,
  p_namespace text, p_scope text, p_key text, p_fingerprint text, p_fence text, p_now double precision,
  p_lease_seconds double precision, p_retention_seconds double precision, p_max_per_scope bigint,
  p_task_sender text, p_task_id text, p_task_terminal boolean, p_task_comparison text,
  p_task_delivery_key text, p_task_now double precision, p_task_lease_seconds double precision,
  p_task_retention_seconds double precision, p_notification_id text,
  p_older_nonce boolean DEFAULT true, p_older_claim boolean DEFAULT true, p_older_terminal boolean DEFAULT true,
  p_older_notification boolean DEFAULT true,
  OUT r_kind text, OUT r_claim text, OUT r_lease_until double precision, OUT r_result text,
  OUT r_convergence text, OUT r_reemission boolean
)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
DECLARE
  v_remembered text;
  v_claim text;
  v_lease_until double precision;
  v_result text;
  v_comparison text;
  v_state text;
  v_owner text;
  v_convergence text := 'proceed';
  v_notification text;
  v_reemission boolean := false;
  v_published boolean := false;
  v_claim_generation bigint;
  v_terminal_generation bigint;
  -- The OUT parameters of claim and observe_terminal, each called as one plpgsql simple expression.
  v_decided record;
BEGIN
  -- A null keyid: a legacy delivery without a nonce.
  IF p_keyid IS NOT NULL THEN
    v_remembered := ${s}.remember_nonce(p_keyid, p_nonce, p_nonce_expires_at, p_nonce_cap, p_now, p_older_nonce);
    IF v_remembered = 'replayed' OR v_remembered = 'capacity' THEN
      r_kind := CASE WHEN v_remembered = 'replayed' THEN 'replayed' ELSE 'replay_capacity' END;
      r_claim := NULL::text;
      r_lease_until := NULL::double precision;
      r_result := NULL::text;
      r_convergence := NULL::text;
      r_reemission := false;
      RETURN;
    END IF;
  END IF;

  -- A claim claimed or taken over is written completed already (p_settle): see claim.
  v_decided := ${s}.claim(p_namespace, p_scope, p_key, p_fingerprint, p_fence, p_now, p_lease_seconds,
                          p_retention_seconds, p_max_per_scope, true, p_older_claim);
  v_claim := v_decided.o_outcome;
  v_lease_until := v_decided.o_lease_until;
  v_result := v_decided.o_result;
  v_claim_generation := v_decided.o_generation;
  IF v_claim IS DISTINCT FROM 'claimed' AND v_claim IS DISTINCT FROM 'takeover' THEN
    r_kind := 'claim'::text;
    r_claim := v_claim;
    r_lease_until := v_lease_until;
    r_result := v_result;
    r_convergence := NULL::text;
    r_reemission := false;
    RETURN;
  END IF;

  -- A null task id: no observation (3.1 mode, or a delivery without a task).
  IF p_task_id IS NOT NULL THEN
    IF p_task_terminal THEN
      -- The decision of PostgresConvergenceStore.observe: the row as it stands after it.
      -- Owned by this delivery's key, a row it takes is written published already (p_publish): see below.
      v_published := coalesce(p_task_delivery_key = p_key, false);
      v_decided := ${s}.observe_terminal(p_task_sender, p_task_id, p_task_comparison, p_task_delivery_key,
                                         p_task_now, p_task_lease_seconds, p_task_retention_seconds,
                                         v_published, p_older_terminal);
      v_comparison := v_decided.o_comparison;
      v_state := v_decided.o_state;
      v_owner := v_decided.o_owner;
      v_terminal_generation := v_decided.o_generation;
      v_convergence := CASE
        WHEN v_comparison <> p_task_comparison THEN 'conflict'
        WHEN v_state = 'published' THEN 'duplicate'
        WHEN v_owner <> p_task_delivery_key THEN 'in_progress'
        ELSE 'proceed' END;
    ELSIF EXISTS (SELECT 1 FROM ${s}.terminals t
                   WHERE t.sender = p_task_sender AND t.task_id = p_task_id AND t.expires_at > p_task_now) THEN
      v_convergence := 'stale';
    END IF;
    IF v_convergence = 'conflict' OR v_convergence = 'in_progress' THEN
      -- Give the claim back (still bound to its payload): another delivery may take it over at once.
      UPDATE ${s}.claims c SET state = 'processing', lease_until = 0
        WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key AND c.fence = p_fence
          AND c.generation = v_claim_generation;
      r_kind := 'convergence'::text;
      r_claim := v_claim;
      r_lease_until := NULL::double precision;
      r_result := NULL::text;
      r_convergence := v_convergence;
      r_reemission := false;
      RETURN;
    ELSIF v_convergence = 'duplicate' OR v_convergence = 'stale' THEN
      -- The claim stays completed.
      r_kind := 'convergence'::text;
      r_claim := v_claim;
      r_lease_until := NULL::double precision;
      r_result := NULL::text;
      r_convergence := v_convergence;
      r_reemission := false;
      RETURN;
    END IF;
  END IF;

  -- notification_id names one logical notification: the same one under another key is a re-emission.
  IF p_notification_id IS NOT NULL THEN
    -- Claimed or taken over, it is written completed (p_settle).
    v_decided := ${s}.claim(p_namespace, p_scope || '#notification', p_notification_id, p_key, p_fence, p_now,
                            0, p_retention_seconds, NULL, true, p_older_notification);
    v_notification := v_decided.o_outcome;
    v_reemission := v_notification = 'conflict';
  END IF;

  -- Publication: the caller writes the event in this transaction; a failed write rolls all this back.
  -- The terminal record: published by observe_terminal already when owned by this key (the convergence
  -- proceeds only where it wrote the row).
  IF p_task_id IS NOT NULL AND p_task_terminal AND NOT v_published THEN
    UPDATE ${s}.terminals t SET state = 'published'
      WHERE t.sender = p_task_sender AND t.task_id = p_task_id AND t.owner = p_key
        AND t.generation = v_terminal_generation;
  END IF;
  -- The claim is completed already (p_settle).
  r_kind := 'published'::text;
  r_claim := v_claim;
  r_lease_until := v_lease_until;
  r_result := NULL::text;
  r_convergence := NULL::text;
  r_reemission := v_reemission;
END
$fn$;

-- A group's decisions in one round trip, as migration 3's: element i of every array is delivery i, decided in
-- array order. Each decision is one plpgsql simple expression (inbox_accept's OUT parameters), not a function
-- scan and its tuplestore per delivery.
CREATE OR REPLACE FUNCTION ${s}.inbox_accept_group(
  p_keyids text[], p_nonces text[], p_nonce_expires_at double precision[], p_nonce_caps bigint[],
  p_namespaces text[], p_scopes text[], p_keys text[], p_fingerprints text[], p_fences text[],
  p_nows double precision[], p_lease_seconds double precision[], p_retention_seconds double precision[],
  p_max_per_scopes bigint[], p_task_senders text[], p_task_ids text[], p_task_terminals boolean[],
  p_task_comparisons text[], p_task_delivery_keys text[], p_task_nows double precision[],
  p_task_lease_seconds double precision[], p_task_retention_seconds double precision[],
  p_notification_ids text[]
) RETURNS TABLE (r_index integer, r_kind text, r_claim text, r_lease_until double precision, r_result text,
                 r_convergence text, r_reemission boolean)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
DECLARE
  v_decided record;
  v_held boolean;
  v_replay bigint;
  v_claims bigint;
  v_terminals bigint;
  v_old_nonces bigint[];
  v_old_claims bigint[];
  v_old_notifications bigint[];
  v_old_terminals bigint[];
BEGIN
  -- The families' shared keys in the decisions' order, then which deliveries have a row in an older generation.
${generationPrologue(s, 'replay', 'replay_generation', 'v_replay')}
${generationPrologue(s, 'claims', 'claims_generation', 'v_claims')}
${generationPrologue(s, 'terminals', 'terminals_generation', 'v_terminals')}
  SELECT coalesce(array_agg(k.i), '{}') INTO v_old_nonces
    FROM unnest(p_keyids, p_nonces) WITH ORDINALITY AS k(keyid, nonce, i)
    CROSS JOIN LATERAL (SELECT 1 FROM ${s}.replay_nonces n
      WHERE n.keyid = k.keyid AND n.nonce = k.nonce AND n.generation < v_replay OFFSET 0) o;
  SELECT coalesce(array_agg(k.i), '{}') INTO v_old_claims
    FROM unnest(p_namespaces, p_scopes, p_keys) WITH ORDINALITY AS k(namespace, scope, key, i)
    CROSS JOIN LATERAL (SELECT 1 FROM ${s}.claims c
      WHERE c.namespace = k.namespace AND c.scope = k.scope AND c.key = k.key AND c.generation < v_claims OFFSET 0) o;
  SELECT coalesce(array_agg(k.i), '{}') INTO v_old_notifications
    FROM unnest(p_namespaces, p_scopes, p_notification_ids) WITH ORDINALITY AS k(namespace, scope, key, i)
    CROSS JOIN LATERAL (SELECT 1 FROM ${s}.claims c
      WHERE c.namespace = k.namespace AND c.scope = k.scope || '#notification' AND c.key = k.key
        AND c.generation < v_claims OFFSET 0) o;
  SELECT coalesce(array_agg(k.i), '{}') INTO v_old_terminals
    FROM unnest(p_task_senders, p_task_ids) WITH ORDINALITY AS k(sender, task_id, i)
    CROSS JOIN LATERAL (SELECT 1 FROM ${s}.terminals t
      WHERE t.sender = k.sender AND t.task_id = k.task_id AND t.generation < v_terminals OFFSET 0) o;
  FOR i IN 1 .. coalesce(array_length(p_keys, 1), 0) LOOP
    v_decided := ${s}.inbox_accept(p_keyids[i], p_nonces[i], p_nonce_expires_at[i], p_nonce_caps[i],
      p_namespaces[i], p_scopes[i], p_keys[i], p_fingerprints[i], p_fences[i], p_nows[i],
      p_lease_seconds[i], p_retention_seconds[i], p_max_per_scopes[i], p_task_senders[i], p_task_ids[i],
      p_task_terminals[i], p_task_comparisons[i], p_task_delivery_keys[i], p_task_nows[i],
      p_task_lease_seconds[i], p_task_retention_seconds[i], p_notification_ids[i], i = ANY (v_old_nonces),
      i = ANY (v_old_claims), i = ANY (v_old_terminals), i = ANY (v_old_notifications));
    r_index := i;
    r_kind := v_decided.r_kind;
    r_claim := v_decided.r_claim;
    r_lease_until := v_decided.r_lease_until;
    r_result := v_decided.r_result;
    r_convergence := v_decided.r_convergence;
    r_reemission := v_decided.r_reemission;
    RETURN NEXT;
  END LOOP;
END
$fn$;`
}
