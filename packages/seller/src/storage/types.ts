/**
 * What the sales agent keeps: the @adwire/store-* stores (request idempotency claims and the webhook outbox), a
 * settings table (the generated signing key and token hash) and its records (accounts, media buys, creatives,
 * seeded products, review tasks, notification configs), one JSON document each, on one SQLite file or one
 * PostgreSQL schema.
 */
import type { ClaimStore, OutboxStore } from '@adwire/webhooks'

/** One stored record: a JSON document of a kind, under an id unique within the kind. */
export interface StoredRecord<T = Record<string, unknown>> {
  readonly kind: string
  readonly id: string
  /** The principal the record belongs to ('' for the seller's own records). */
  readonly owner: string
  /** Increases on every write: the compare-and-set token of {@link RecordStore.update}. */
  readonly revision: number
  /** Insertion order, stable across updates: the pagination cursor. */
  readonly seq: number
  readonly body: T
}

/** A row of the record table as both drivers return it (PostgreSQL gives BIGINT seq as text). */
export interface RecordRow {
  readonly seq: number | string
  readonly kind: string
  readonly id: string
  readonly owner: string
  readonly revision: number | string
  readonly body: string
}

/** The stored record of a row. */
export const toRecord = <T>(row: RecordRow): StoredRecord<T> => ({
  kind: row.kind,
  id: row.id,
  owner: row.owner,
  revision: Number(row.revision),
  seq: Number(row.seq),
  body: JSON.parse(row.body) as T,
})

/** The record table, the same on SQLite and PostgreSQL. */
export interface RecordStore {
  get<T = Record<string, unknown>>(kind: string, id: string): Promise<StoredRecord<T> | undefined>
  /** Inserts unless the id exists in the kind; resolves with whether it inserted. */
  insert(kind: string, id: string, owner: string, body: object): Promise<boolean>
  /** Inserts or replaces (the seq of an existing record is kept). */
  put(kind: string, id: string, owner: string, body: object): Promise<void>
  /** Replaces the body when the stored revision is still `revision`; resolves with whether it did. */
  update(kind: string, id: string, revision: number, body: object): Promise<boolean>
  /** Records of a kind in insertion order, optionally of one owner, after a seq, at most `limit`. */
  list<T = Record<string, unknown>>(
    kind: string,
    options?: { readonly owner?: string; readonly afterSeq?: number; readonly limit?: number },
  ): Promise<StoredRecord<T>[]>
  /**
   * Records of a kind due at `at` (Unix seconds) by the kind's rule (storage/due.ts), in insertion order, after
   * a seq, at most `limit`: an index read, however many records of the kind are not due.
   */
  listDue<T = Record<string, unknown>>(
    kind: string,
    at: number,
    options?: { readonly afterSeq?: number; readonly limit?: number },
  ): Promise<StoredRecord<T>[]>
  delete(kind: string, id: string): Promise<void>
  /**
   * Deletes the records of a kind whose top-level numeric body `field` is below `below`, or whose boolean
   * `field` is true (`isTrue`); resolves with how many went. `field` is a code constant (`[a-z_]+`).
   */
  prune(kind: string, rule: PruneRule): Promise<number>
  /**
   * Runs `body` in one database transaction: every record write and every outbox enqueue made inside it (in its
   * async context: these records, the claims, a sender on this storage's outbox) commit together, or none does
   * when it throws, so a state change and the pushes announcing it are never separated by a crash. Nested calls
   * join the open one. Nothing slow inside: never an ad server call.
   */
  transaction<T>(body: () => Promise<T>): Promise<T>
}

/** Which records {@link RecordStore.prune} deletes. */
export type PruneRule =
  { readonly field: string; readonly below: number } | { readonly field: string; readonly isTrue: true }

/** Checks a prune field name (it is spliced into a JSON path). */
export function pruneField(field: string): string {
  if (!/^[a-z_]+$/.test(field)) throw new Error(`prune: bad field name ${field}`)
  return field
}

export interface Storage {
  readonly kind: 'sqlite' | 'postgres'
  readonly claims: ClaimStore
  readonly outbox: OutboxStore
  readonly records: RecordStore
  /** {@link RecordStore.transaction}. */
  transaction<T>(body: () => Promise<T>): Promise<T>
  /** Calls `listener` after each transaction commits (the sender's wake: what it enqueued is visible now). */
  onCommit(listener: () => void): void
  getSetting(name: string): Promise<string | undefined>
  /** Stores `value` unless the setting exists; resolves with the value that is stored now (first writer wins). */
  putSettingIfAbsent(name: string, value: string): Promise<string>
  /** Checks the database answers (for /health). */
  ping(): Promise<void>
  /** Deletes expired idempotency claims (and, on PostgreSQL, old outbox entries) at `now` (Unix seconds). */
  sweep(now: number): Promise<void>
  /** Closes the file or the pool. Idempotent. */
  close(): Promise<void>
}

/** The schema migrations, in order; each runs once per database (its index is recorded). */
export const MIGRATIONS: readonly ((
  table: (name: string) => string,
  dialect: 'sqlite' | 'postgres',
) => string[])[] = [
  (t, dialect) => [
    `CREATE TABLE IF NOT EXISTS ${t('sales_agent_settings')} (name TEXT PRIMARY KEY, value TEXT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${t('sales_records')} (
        seq ${dialect === 'sqlite' ? 'INTEGER PRIMARY KEY AUTOINCREMENT' : 'BIGSERIAL PRIMARY KEY'},
        kind TEXT NOT NULL, id TEXT NOT NULL, owner TEXT NOT NULL, revision INTEGER NOT NULL,
        body TEXT NOT NULL, updated_at BIGINT NOT NULL, UNIQUE (kind, id))`,
    `CREATE INDEX IF NOT EXISTS sales_records_owner ON ${t('sales_records')} (kind, owner, seq)`,
  ],
  // When each record is next due (storage/due.ts), for the periodic work; filled for existing rows by
  // {@link backfillDue}.
  (t, dialect) => [
    `ALTER TABLE ${t('sales_records')} ADD COLUMN due_at ${dialect === 'sqlite' ? 'REAL' : 'DOUBLE PRECISION'}`,
    `CREATE INDEX IF NOT EXISTS sales_records_due ON ${t('sales_records')} (kind, due_at) WHERE due_at IS NOT NULL`,
  ],
]

/** The migration that adds `due_at`: rows stored before it get their value computed once. */
export const DUE_MIGRATION = 1
