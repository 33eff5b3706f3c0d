/**
 * The schema, as numbered migrations. Each runs once, in its own IMMEDIATE transaction that also records it
 * in `schema_migrations`, so that processes opening one file at the same time apply it exactly once. Never edit
 * a released migration: add the next number.
 */
import type Database from 'better-sqlite3'
import { StoreError } from './errors.js'

interface Migration {
  readonly version: number
  readonly name: string
  readonly sql: string
}

/** Every migration this release knows, in order (exported for the package's upgrade tests). */
export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'claims, task terminals, outbox, webhook activity, replay nonces',
    sql: `
      CREATE TABLE claims (
        namespace TEXT NOT NULL,
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('processing', 'completed')),
        fence TEXT NOT NULL,
        lease_until REAL NOT NULL,
        expires_at REAL NOT NULL,
        result TEXT,
        PRIMARY KEY (namespace, scope, key)
      ) WITHOUT ROWID;
      CREATE INDEX claims_scope_expiry ON claims (namespace, scope, expires_at);
      CREATE INDEX claims_expiry ON claims (expires_at);
      -- Rows per scope (live or expired and not yet swept), kept by triggers, so that the capacity check
      -- reads one row instead of counting up to maxPerScope records.
      CREATE TABLE claim_scopes (
        namespace TEXT NOT NULL,
        scope TEXT NOT NULL,
        records INTEGER NOT NULL,
        PRIMARY KEY (namespace, scope)
      ) WITHOUT ROWID;
      CREATE TRIGGER claims_counted AFTER INSERT ON claims BEGIN
        INSERT INTO claim_scopes (namespace, scope, records) VALUES (NEW.namespace, NEW.scope, 1)
          ON CONFLICT (namespace, scope) DO UPDATE SET records = records + 1;
      END;
      CREATE TRIGGER claims_uncounted AFTER DELETE ON claims BEGIN
        UPDATE claim_scopes SET records = records - 1 WHERE namespace = OLD.namespace AND scope = OLD.scope;
        DELETE FROM claim_scopes WHERE namespace = OLD.namespace AND scope = OLD.scope AND records <= 0;
      END;

      CREATE TABLE task_terminals (
        sender TEXT NOT NULL,
        task_id TEXT NOT NULL,
        comparison TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('publishing', 'published')),
        owner TEXT NOT NULL,
        lease_until REAL NOT NULL,
        expires_at REAL NOT NULL,
        PRIMARY KEY (sender, task_id)
      ) WITHOUT ROWID;
      CREATE INDEX task_terminals_expiry ON task_terminals (expires_at);

      CREATE TABLE outbox (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        destination TEXT NOT NULL,
        url TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        body TEXT NOT NULL,
        headers TEXT NOT NULL,
        coalesce_key TEXT,
        created_at REAL NOT NULL,
        next_attempt_at REAL NOT NULL,
        deadline_at REAL NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed', 'superseded')),
        fence TEXT,
        lease_until REAL NOT NULL DEFAULT 0
      );
      CREATE INDEX outbox_due ON outbox (next_attempt_at, created_at, seq) WHERE state = 'pending';
      CREATE INDEX outbox_pending_destination ON outbox (destination, coalesce_key) WHERE state = 'pending';

      CREATE TABLE webhook_activity (
        seq INTEGER PRIMARY KEY,
        entry_id TEXT NOT NULL REFERENCES outbox (id) ON DELETE CASCADE,
        destination TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        status TEXT NOT NULL,
        http_status_code INTEGER,
        attempt INTEGER NOT NULL,
        error_message TEXT,
        at REAL NOT NULL
      );
      CREATE INDEX webhook_activity_destination ON webhook_activity (destination, seq);
      CREATE INDEX webhook_activity_entry ON webhook_activity (entry_id);

      CREATE TABLE replay_nonces (
        keyid TEXT NOT NULL,
        nonce TEXT NOT NULL,
        expires_at REAL NOT NULL,
        PRIMARY KEY (keyid, nonce)
      ) WITHOUT ROWID;
      CREATE INDEX replay_nonces_keyid_expiry ON replay_nonces (keyid, expires_at);
      CREATE INDEX replay_nonces_expiry ON replay_nonces (expires_at);
      CREATE TABLE replay_keyids (
        keyid TEXT NOT NULL PRIMARY KEY,
        entries INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE TRIGGER replay_nonces_counted AFTER INSERT ON replay_nonces BEGIN
        INSERT INTO replay_keyids (keyid, entries) VALUES (NEW.keyid, 1)
          ON CONFLICT (keyid) DO UPDATE SET entries = entries + 1;
      END;
      CREATE TRIGGER replay_nonces_uncounted AFTER DELETE ON replay_nonces BEGIN
        UPDATE replay_keyids SET entries = entries - 1 WHERE keyid = OLD.keyid;
        DELETE FROM replay_keyids WHERE keyid = OLD.keyid AND entries <= 0;
      END;
    `,
  },
  {
    version: 2,
    name: 'outbox media buys: final-report barriers and closed media buys',
    sql: `
      -- Additive: entries enqueued before it concern no media buy and are no barrier.
      ALTER TABLE outbox ADD COLUMN media_buy_ids TEXT NOT NULL DEFAULT '[]';
      ALTER TABLE outbox ADD COLUMN barrier INTEGER NOT NULL DEFAULT 0 CHECK (barrier IN (0, 1));

      -- The media buys of pending entries only, kept by triggers: a row goes when its entry is delivered,
      -- failed or superseded, so that "an earlier pending entry of this buy" is one index probe.
      CREATE TABLE outbox_media_buys (
        media_buy_id TEXT NOT NULL,
        entry_seq INTEGER NOT NULL REFERENCES outbox (seq) ON DELETE CASCADE,
        PRIMARY KEY (media_buy_id, entry_seq)
      ) WITHOUT ROWID;
      CREATE INDEX outbox_media_buys_entry ON outbox_media_buys (entry_seq);
      CREATE TRIGGER outbox_media_buys_added AFTER INSERT ON outbox WHEN NEW.state = 'pending' BEGIN
        INSERT OR IGNORE INTO outbox_media_buys (media_buy_id, entry_seq)
          SELECT value, NEW.seq FROM json_each(NEW.media_buy_ids);
      END;
      CREATE TRIGGER outbox_media_buys_settled AFTER UPDATE OF state ON outbox
        WHEN OLD.state = 'pending' AND NEW.state <> 'pending' BEGIN
        DELETE FROM outbox_media_buys WHERE entry_seq = NEW.seq;
      END;

      -- Closed media buys: nothing more is enqueued for them. Written with the buy's final report (entry_id)
      -- or by closeMediaBuys; never deleted with outbox rows (any pruning must keep a record at least the
      -- retry horizon longer than the outbox rows of its buy).
      CREATE TABLE media_buys_closed (
        media_buy_id TEXT NOT NULL PRIMARY KEY,
        closed_at REAL NOT NULL,
        entry_id TEXT
      ) WITHOUT ROWID;
      CREATE TRIGGER outbox_barrier_closes AFTER INSERT ON outbox WHEN NEW.barrier = 1 BEGIN
        INSERT OR IGNORE INTO media_buys_closed (media_buy_id, closed_at, entry_id)
          SELECT value, NEW.created_at, NEW.id FROM json_each(NEW.media_buy_ids);
      END;
    `,
  },
]

/** The newest schema version this copy of the package knows. */
export const SCHEMA_VERSION: number = migrations.at(-1)?.version ?? 0

/**
 * Brings the file up to {@link SCHEMA_VERSION}; a no-op when it is there already. Throws `store_schema_newer`
 * (before changing anything) when a newer copy of the package migrated the file.
 */
export function migrate(database: Database.Database, now: () => number = () => Date.now() / 1000): number {
  const currentVersion = () =>
    database.prepare('SELECT coalesce(max(version), 0) FROM schema_migrations').pluck().get() as number
  const check = (version: number) => {
    if (version > SCHEMA_VERSION) {
      throw new StoreError(
        'store_schema_newer',
        `${database.name} has schema version ${version}, newer than the ${SCHEMA_VERSION} this @adwire/store-sqlite knows; upgrade @adwire/store-sqlite`,
      )
    }
  }
  const start = database.transaction(() => {
    database.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)',
    )
    const version = currentVersion()
    check(version)
    return version
  })
  let version = start.immediate()
  for (const migration of migrations) {
    if (migration.version <= version) continue
    const apply = database.transaction(() => {
      // Another process may have applied it since we looked.
      const current = currentVersion()
      check(current)
      if (current >= migration.version) return current
      database.exec(migration.sql)
      database
        .prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)')
        .run(migration.version, now())
      return migration.version
    })
    version = apply.immediate()
  }
  return version
}
