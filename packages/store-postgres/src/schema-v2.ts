/**
 * Migration 2 (additive; entries stored before it concern no media buy and are no barrier): what the sender
 * needs for "queued impairments first, then the final delivery report, then nothing more" at any concurrency
 * and across processes.
 *
 * - `outbox.media_buy_ids` and `outbox.barrier`: the media buys an entry concerns, and whether it is a buy's
 *   final report, which is never leased while an earlier entry of its buys is pending;
 * - `outbox_media_buys`: the media buys of pending entries only (rows leave when their entry is delivered,
 *   failed or superseded), so that the lease's "earlier pending entry of this buy" is one index probe;
 * - `media_buys_closed`: closed media buys, written with the final report or by `closeMediaBuys`. The outbox
 *   sweep never deletes them; any pruning must keep a record at least the retry horizon longer than the
 *   outbox rows of its buy.
 *
 * Writers of one media buy serialise on a transaction advisory lock per buy (taken in id order, after the
 * coalesce-key lock), so that an entry is either committed before the buy's final report or refused.
 *
 * Distribution (Citus): both tables are keyed by media buy, not by destination (a buy's entries may go to
 * several destinations, and a buy is closed for all of them), so they have no distribution column yet; the
 * statements that touch them (the lease's barrier check, the media-buy part of enqueue and record) are the
 * outbox's multi-shard ones, listed in the package README.
 */
export function mediaBuysSchema(schema: string): string {
  const s = schema
  return `
ALTER TABLE ${s}.outbox ADD COLUMN media_buy_ids text[] NOT NULL DEFAULT '{}';
ALTER TABLE ${s}.outbox ADD COLUMN barrier boolean NOT NULL DEFAULT false;

CREATE TABLE ${s}.outbox_media_buys (
  media_buy_id text NOT NULL,
  entry_seq bigint NOT NULL REFERENCES ${s}.outbox (seq) ON DELETE CASCADE,
  PRIMARY KEY (media_buy_id, entry_seq)
);
CREATE INDEX outbox_media_buys_entry ON ${s}.outbox_media_buys (entry_seq);

CREATE TABLE ${s}.media_buys_closed (
  media_buy_id text PRIMARY KEY,
  closed_at double precision NOT NULL,
  entry_id text
);
`
}
