/**
 * Migration 3 (functions only, no table changes): the transactional inbox's decision of a delivery in one
 * round trip, and of a whole group of deliveries in one round trip.
 *
 * `inbox_accept` does server-side, in the same order and with the same outcomes, what `acceptInTransaction`
 * (@adwire/webhooks) does with one statement per step: the nonce (`remember_nonce`), the claim (`claim`),
 * the convergence observation (the upsert and the read of `PostgresConvergenceStore`), the claim given back
 * or completed when convergence decides, the notification re-emission check (a claim with no lease on scope
 * `<scope>#notification`, bound to the delivery key, completed at once), and for a delivery to publish the
 * convergence settle and the claim completion. Only the event write is left to the caller, in the same
 * transaction: acceptInTransaction settles and completes after the write, but a failed write rolls the
 * delivery back whole (its savepoint, or the group), and the writer touches none of these tables, so doing
 * them first commits the same rows. It takes the row locks in acceptInTransaction's order: the keyid
 * counter, the claim scope counter (or the claim row), the task's terminal row, the notification scope.
 *
 * `inbox_accept_group` runs `inbox_accept` for each delivery of a group, in array order (the caller's lock
 * order), and returns one row per delivery with its 1-based index.
 *
 * One fence serves the delivery's claim and its notification claim: fences are compared per row, and both
 * rows are completed in this call.
 *
 * Distribution (Citus): every statement of both functions names its table's distribution column with `=`:
 * the keyid (`remember_nonce`), the claim scope (`claim` and the claim updates; `<scope>#notification` for the
 * notification claim) and the task's sender (the `terminals` upsert, read and update). None needed changing.
 *
 * At REPEATABLE READ or SERIALIZABLE the functions stay exact: a counter or row locked with `FOR UPDATE` (or
 * met by `ON CONFLICT`) that changed after the transaction's snapshot fails with SQLSTATE 40001 instead of
 * being read stale, and the stores run the whole transaction again.
 */
export function inboxSchema(schema: string): string {
  const s = schema
  return `
-- Outcome rows: r_kind is replayed, replay_capacity, claim (r_claim: processing with r_lease_until,
-- completed with r_result, conflict, capacity), convergence (r_convergence: conflict, in_progress,
-- duplicate, stale) or published (r_claim: claimed or takeover; r_reemission).
CREATE FUNCTION ${s}.inbox_accept(
  p_keyid text, p_nonce text, p_nonce_expires_at double precision, p_nonce_cap bigint,
  p_namespace text, p_scope text, p_key text, p_fingerprint text, p_fence text, p_now double precision,
  p_lease_seconds double precision, p_retention_seconds double precision, p_max_per_scope bigint,
  p_task_sender text, p_task_id text, p_task_terminal boolean, p_task_comparison text,
  p_task_delivery_key text, p_task_now double precision, p_task_lease_seconds double precision,
  p_task_retention_seconds double precision, p_notification_id text
) RETURNS TABLE (r_kind text, r_claim text, r_lease_until double precision, r_result text,
                 r_convergence text, r_reemission boolean)
LANGUAGE plpgsql AS $fn$
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
BEGIN
  -- A null keyid: a legacy delivery without a nonce.
  IF p_keyid IS NOT NULL THEN
    v_remembered := ${s}.remember_nonce(p_keyid, p_nonce, p_nonce_expires_at, p_nonce_cap, p_now);
    IF v_remembered = 'replayed' OR v_remembered = 'capacity' THEN
      RETURN QUERY SELECT CASE WHEN v_remembered = 'replayed' THEN 'replayed' ELSE 'replay_capacity' END,
        NULL::text, NULL::double precision, NULL::text, NULL::text, false;
      RETURN;
    END IF;
  END IF;

  SELECT c.o_outcome, c.o_lease_until, c.o_result INTO v_claim, v_lease_until, v_result
    FROM ${s}.claim(p_namespace, p_scope, p_key, p_fingerprint, p_fence, p_now, p_lease_seconds,
                    p_retention_seconds, p_max_per_scope) c;
  IF v_claim IS DISTINCT FROM 'claimed' AND v_claim IS DISTINCT FROM 'takeover' THEN
    RETURN QUERY SELECT 'claim'::text, v_claim, v_lease_until, v_result, NULL::text, false;
    RETURN;
  END IF;

  -- A null task id: no observation (3.1 mode, or a delivery without a task).
  IF p_task_id IS NOT NULL THEN
    IF p_task_terminal THEN
      -- The statement of PostgresConvergenceStore.observe: the row as it stands after the decision.
      INSERT INTO ${s}.terminals AS t (sender, task_id, comparison, state, owner, lease_until, expires_at)
        VALUES (p_task_sender, p_task_id, p_task_comparison, 'publishing', p_task_delivery_key,
                p_task_now + p_task_lease_seconds, p_task_now + p_task_retention_seconds)
        ON CONFLICT (sender, task_id) DO UPDATE SET
          comparison = CASE WHEN t.expires_at <= p_task_now THEN excluded.comparison ELSE t.comparison END,
          state = CASE WHEN t.expires_at <= p_task_now THEN 'publishing' ELSE t.state END,
          owner = CASE WHEN (t.expires_at <= p_task_now OR (t.comparison = excluded.comparison
                    AND t.state = 'publishing' AND (t.owner = excluded.owner OR t.lease_until <= p_task_now)))
                  THEN excluded.owner ELSE t.owner END,
          lease_until = CASE WHEN (t.expires_at <= p_task_now OR (t.comparison = excluded.comparison
                    AND t.state = 'publishing' AND (t.owner = excluded.owner OR t.lease_until <= p_task_now)))
                  THEN excluded.lease_until ELSE t.lease_until END,
          expires_at = CASE WHEN t.expires_at <= p_task_now THEN excluded.expires_at ELSE t.expires_at END
        RETURNING t.comparison, t.state, t.owner INTO v_comparison, v_state, v_owner;
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
      UPDATE ${s}.claims c SET lease_until = 0
        WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key AND c.fence = p_fence
          AND c.state = 'processing';
      RETURN QUERY SELECT 'convergence'::text, v_claim, NULL::double precision, NULL::text, v_convergence, false;
      RETURN;
    ELSIF v_convergence = 'duplicate' OR v_convergence = 'stale' THEN
      UPDATE ${s}.claims c SET result = CASE WHEN c.state = 'processing' THEN NULL ELSE c.result END,
          state = 'completed'
        WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key AND c.fence = p_fence;
      RETURN QUERY SELECT 'convergence'::text, v_claim, NULL::double precision, NULL::text, v_convergence, false;
      RETURN;
    END IF;
  END IF;

  -- notification_id names one logical notification: the same one under another key is a re-emission.
  IF p_notification_id IS NOT NULL THEN
    SELECT c.o_outcome INTO v_notification
      FROM ${s}.claim(p_namespace, p_scope || '#notification', p_notification_id, p_key, p_fence, p_now,
                      0, p_retention_seconds, NULL) c;
    IF v_notification = 'claimed' OR v_notification = 'takeover' THEN
      UPDATE ${s}.claims c SET result = CASE WHEN c.state = 'processing' THEN NULL ELSE c.result END,
          state = 'completed'
        WHERE c.namespace = p_namespace AND c.scope = p_scope || '#notification' AND c.key = p_notification_id
          AND c.fence = p_fence;
    ELSE
      v_reemission := v_notification = 'conflict';
    END IF;
  END IF;

  -- Publication: the caller writes the event in this transaction; a failed write rolls all this back.
  IF p_task_id IS NOT NULL AND p_task_terminal THEN
    UPDATE ${s}.terminals t SET state = 'published'
      WHERE t.sender = p_task_sender AND t.task_id = p_task_id AND t.owner = p_key;
  END IF;
  UPDATE ${s}.claims c SET result = CASE WHEN c.state = 'processing' THEN NULL ELSE c.result END,
      state = 'completed'
    WHERE c.namespace = p_namespace AND c.scope = p_scope AND c.key = p_key AND c.fence = p_fence;
  RETURN QUERY SELECT 'published'::text, v_claim, v_lease_until, NULL::text, NULL::text, v_reemission;
END
$fn$;

-- A group's decisions in one round trip: element i of every array is delivery i (see inbox_accept).
CREATE FUNCTION ${s}.inbox_accept_group(
  p_keyids text[], p_nonces text[], p_nonce_expires_at double precision[], p_nonce_caps bigint[],
  p_namespaces text[], p_scopes text[], p_keys text[], p_fingerprints text[], p_fences text[],
  p_nows double precision[], p_lease_seconds double precision[], p_retention_seconds double precision[],
  p_max_per_scopes bigint[], p_task_senders text[], p_task_ids text[], p_task_terminals boolean[],
  p_task_comparisons text[], p_task_delivery_keys text[], p_task_nows double precision[],
  p_task_lease_seconds double precision[], p_task_retention_seconds double precision[],
  p_notification_ids text[]
) RETURNS TABLE (r_index integer, r_kind text, r_claim text, r_lease_until double precision, r_result text,
                 r_convergence text, r_reemission boolean)
LANGUAGE plpgsql AS $fn$
BEGIN
  -- One after the other, in array order: the caller's lock order, and a later copy of a key sees the
  -- earlier one's claim.
  FOR i IN 1 .. coalesce(array_length(p_keys, 1), 0) LOOP
    RETURN QUERY SELECT i, a.r_kind, a.r_claim, a.r_lease_until, a.r_result, a.r_convergence, a.r_reemission
      FROM ${s}.inbox_accept(p_keyids[i], p_nonces[i], p_nonce_expires_at[i], p_nonce_caps[i],
        p_namespaces[i], p_scopes[i], p_keys[i], p_fingerprints[i], p_fences[i], p_nows[i],
        p_lease_seconds[i], p_retention_seconds[i], p_max_per_scopes[i], p_task_senders[i], p_task_ids[i],
        p_task_terminals[i], p_task_comparisons[i], p_task_delivery_keys[i], p_task_nows[i],
        p_task_lease_seconds[i], p_task_retention_seconds[i], p_notification_ids[i]) a;
  END LOOP;
END
$fn$;
`
}
