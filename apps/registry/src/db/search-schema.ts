/**
 * Migration 6: the cross-entity search index and the discovery queues.
 *
 * Every searchable entity has one row in `registry_search_entries` (brand, publisher, property, agent) with a
 * `title` (weighted high) and a `body`; triggers on the entity tables keep it in step with every write, whatever
 * the write path (snapshots, saves, hosted setups, the seed, the bench's bulk loads), and the migration backfills
 * the rows already stored. The full-text index over it is dialect-specific:
 *
 * - SQLite: one FTS5 external-content table per entity type (`registry_search_fts_brand`…, unicode61
 *   tokens, no diacritic folding) over `registry_search_entries`, kept in step with it by triggers, ranked
 *   with `bm25`: a category's query scans only its own index.
 * - PostgreSQL: a stored generated `tsvector` column (title weight A, body weight B, `simple` configuration on
 *   text whose punctuation became spaces, so both dialects split `acme-outdoor.example` the same way) under one
 *   partial GIN index per entity type, ranked with `ts_rank`.
 *
 * Agents are indexed by canonical URL: one row while the agent is named by an authorization or registered as a
 * `public` member agent (whose name becomes the title); private and members-only registrations stay out of
 * the public search.
 */

/** The SQL expressions of each entity's title and body, over the trigger row `r` (`new`/`old`). */
const brandBody = (r: string) =>
  `${r}.domain || ' ' || COALESCE(${r}.house_name, '') || ' ' || COALESCE(${r}.house_domain, '') || ' ' || COALESCE(${r}.parent_brand, '') || ' ' || COALESCE(${r}.names, '')`
const publisherBody = (r: string) => `${r}.domain || ' ' || COALESCE(${r}.manager_domain, '')`
const propertyBody = (r: string) =>
  `${r}.publisher_domain || ' ' || ${r}.property_id || ' ' || ${r}.property_type || ' ' || replace(replace(${r}.identifiers, '"type":', ' '), '"value":', ' ') || ' ' || ${r}.tags`

const UPSERT = `ON CONFLICT (entity_type, parent_key, entity_key) DO UPDATE SET title = excluded.title, body = excluded.body`
const ENTRY = 'INSERT INTO registry_search_entries (entity_type, parent_key, entity_key, title, body)'

/** Statements that rebuild the agent row of canonical URL `key` (an SQL expression) from what is stored. */
const agentRecompute = (key: string): string[] => [
  `DELETE FROM registry_search_entries WHERE entity_type = 'agent' AND parent_key = '' AND entity_key = ${key}`,
  `${ENTRY} SELECT 'agent', '', m.url_canonical, COALESCE(m.name, m.url), m.url || ' ' || m.type
     FROM registry_member_agents m WHERE m.url_canonical = ${key} AND m.visibility = 'public'
     ORDER BY m.created_at LIMIT 1 ON CONFLICT (entity_type, parent_key, entity_key) DO NOTHING`,
  `${ENTRY} SELECT 'agent', '', a.agent_url_canonical, a.agent_url, a.agent_url
     FROM registry_authorizations a WHERE a.agent_url_canonical = ${key}
     LIMIT 1 ON CONFLICT (entity_type, parent_key, entity_key) DO NOTHING`,
]

const agentFromAuthorization = (r: string) =>
  `${ENTRY} VALUES ('agent', '', ${r}.agent_url_canonical, ${r}.agent_url, ${r}.agent_url)
   ON CONFLICT (entity_type, parent_key, entity_key) DO NOTHING`
const agentGoneWithAuthorization = (r: string) =>
  `DELETE FROM registry_search_entries WHERE entity_type = 'agent' AND parent_key = '' AND entity_key = ${r}.agent_url_canonical
   AND NOT EXISTS (SELECT 1 FROM registry_authorizations x WHERE x.agent_url_canonical = ${r}.agent_url_canonical)
   AND NOT EXISTS (SELECT 1 FROM registry_member_agents m WHERE m.url_canonical = ${r}.agent_url_canonical AND m.visibility = 'public')`

/** The rows already stored, indexed once by the migration. */
const BACKFILL = [
  `${ENTRY} SELECT 'brand', '', b.domain, b.brand_name, ${brandBody('b')} FROM registry_brands b WHERE true ${UPSERT}`,
  `${ENTRY} SELECT 'publisher', '', p.domain, p.domain, ${publisherBody('p')} FROM registry_publishers p WHERE true ${UPSERT}`,
  `${ENTRY} SELECT 'property', p.publisher_domain, p.property_id, p.name, ${propertyBody('p')} FROM registry_properties p WHERE true ${UPSERT}`,
  `${ENTRY} SELECT 'agent', '', m.url_canonical, COALESCE(MIN(m.name), MIN(m.url)), MIN(m.url) || ' ' || MIN(m.type)
     FROM registry_member_agents m WHERE m.visibility = 'public' GROUP BY m.url_canonical
     ON CONFLICT (entity_type, parent_key, entity_key) DO NOTHING`,
  `${ENTRY} SELECT 'agent', '', a.agent_url_canonical, MIN(a.agent_url), MIN(a.agent_url)
     FROM registry_authorizations a WHERE true GROUP BY a.agent_url_canonical
     ON CONFLICT (entity_type, parent_key, entity_key) DO NOTHING`,
]

/** Tables of both dialects: brand crawl debouncing and the manager re-validation queue. */
export const DISCOVERY_TABLES: readonly string[] = [
  // The last outbound request per (kind, target): the 5-minute debounce of brand crawls and manager fan-outs.
  `CREATE TABLE IF NOT EXISTS registry_outbound_requests (
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    requested_by TEXT,
    requested_at TEXT NOT NULL,
    status TEXT NOT NULL,
    completed_at TEXT,
    last_error TEXT,
    PRIMARY KEY (kind, target))`,
  `CREATE TABLE IF NOT EXISTS registry_manager_revalidation_queue (
    publisher_domain TEXT PRIMARY KEY,
    manager_domain TEXT NOT NULL,
    requested_by TEXT,
    enqueued_at TEXT NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS registry_manager_revalidation_queue_order
    ON registry_manager_revalidation_queue (enqueued_at, publisher_domain)`,
  `CREATE INDEX IF NOT EXISTS registry_publishers_manager ON registry_publishers (manager_domain)`,
]

/** The entity types of the index (one FTS5 table and one partial GIN index each). */
export const SEARCH_TYPES = ['brand', 'publisher', 'property', 'agent'] as const

/** SQLite: the entries table, one FTS5 index per entity type over it, the triggers, the backfill. */
export const SEARCH_SQLITE: readonly string[] = [
  `CREATE TABLE registry_search_entries (
    id INTEGER PRIMARY KEY,
    entity_type TEXT NOT NULL,
    parent_key TEXT NOT NULL,
    entity_key TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    UNIQUE (entity_type, parent_key, entity_key))`,
  ...SEARCH_TYPES.flatMap((type) => [
    `CREATE VIRTUAL TABLE registry_search_fts_${type} USING fts5(title, body, content='registry_search_entries',
      content_rowid='id', tokenize='unicode61 remove_diacritics 0')`,
    `CREATE TRIGGER registry_search_entries_ai_${type} AFTER INSERT ON registry_search_entries
      WHEN new.entity_type = '${type}' BEGIN
      INSERT INTO registry_search_fts_${type} (rowid, title, body) VALUES (new.id, new.title, new.body);
    END`,
    `CREATE TRIGGER registry_search_entries_ad_${type} AFTER DELETE ON registry_search_entries
      WHEN old.entity_type = '${type}' BEGIN
      INSERT INTO registry_search_fts_${type} (registry_search_fts_${type}, rowid, title, body)
        VALUES ('delete', old.id, old.title, old.body);
    END`,
    `CREATE TRIGGER registry_search_entries_au_${type} AFTER UPDATE ON registry_search_entries
      WHEN old.entity_type = '${type}' BEGIN
      INSERT INTO registry_search_fts_${type} (registry_search_fts_${type}, rowid, title, body)
        VALUES ('delete', old.id, old.title, old.body);
      INSERT INTO registry_search_fts_${type} (rowid, title, body) VALUES (new.id, new.title, new.body);
    END`,
  ]),
  // brands
  `CREATE TRIGGER registry_brands_search_ai AFTER INSERT ON registry_brands BEGIN
    ${ENTRY} VALUES ('brand', '', new.domain, new.brand_name, ${brandBody('new')}) ${UPSERT};
  END`,
  `CREATE TRIGGER registry_brands_search_au AFTER UPDATE ON registry_brands BEGIN
    DELETE FROM registry_search_entries WHERE entity_type = 'brand' AND parent_key = '' AND entity_key = old.domain AND old.domain <> new.domain;
    ${ENTRY} VALUES ('brand', '', new.domain, new.brand_name, ${brandBody('new')}) ${UPSERT};
  END`,
  `CREATE TRIGGER registry_brands_search_ad AFTER DELETE ON registry_brands BEGIN
    DELETE FROM registry_search_entries WHERE entity_type = 'brand' AND parent_key = '' AND entity_key = old.domain;
  END`,
  // publishers
  `CREATE TRIGGER registry_publishers_search_ai AFTER INSERT ON registry_publishers BEGIN
    ${ENTRY} VALUES ('publisher', '', new.domain, new.domain, ${publisherBody('new')}) ${UPSERT};
  END`,
  `CREATE TRIGGER registry_publishers_search_au AFTER UPDATE OF domain, manager_domain ON registry_publishers BEGIN
    DELETE FROM registry_search_entries WHERE entity_type = 'publisher' AND parent_key = '' AND entity_key = old.domain AND old.domain <> new.domain;
    ${ENTRY} VALUES ('publisher', '', new.domain, new.domain, ${publisherBody('new')}) ${UPSERT};
  END`,
  `CREATE TRIGGER registry_publishers_search_ad AFTER DELETE ON registry_publishers BEGIN
    DELETE FROM registry_search_entries WHERE entity_type = 'publisher' AND parent_key = '' AND entity_key = old.domain;
  END`,
  // properties
  `CREATE TRIGGER registry_properties_search_ai AFTER INSERT ON registry_properties BEGIN
    ${ENTRY} VALUES ('property', new.publisher_domain, new.property_id, new.name, ${propertyBody('new')}) ${UPSERT};
  END`,
  `CREATE TRIGGER registry_properties_search_au
    AFTER UPDATE OF publisher_domain, property_id, name, property_type, identifiers, tags ON registry_properties BEGIN
    DELETE FROM registry_search_entries WHERE entity_type = 'property' AND parent_key = old.publisher_domain AND entity_key = old.property_id;
    ${ENTRY} VALUES ('property', new.publisher_domain, new.property_id, new.name, ${propertyBody('new')}) ${UPSERT};
  END`,
  `CREATE TRIGGER registry_properties_search_ad AFTER DELETE ON registry_properties BEGIN
    DELETE FROM registry_search_entries WHERE entity_type = 'property' AND parent_key = old.publisher_domain AND entity_key = old.property_id;
  END`,
  // agents named by authorizations
  `CREATE TRIGGER registry_authorizations_search_ai AFTER INSERT ON registry_authorizations BEGIN
    ${agentFromAuthorization('new')};
  END`,
  `CREATE TRIGGER registry_authorizations_search_ad AFTER DELETE ON registry_authorizations BEGIN
    ${agentGoneWithAuthorization('old')};
  END`,
  `CREATE TRIGGER registry_authorizations_search_au AFTER UPDATE OF agent_url_canonical ON registry_authorizations BEGIN
    ${agentGoneWithAuthorization('old')};
    ${agentFromAuthorization('new')};
  END`,
  // public member agents
  `CREATE TRIGGER registry_member_agents_search_ai AFTER INSERT ON registry_member_agents BEGIN
    ${agentRecompute('new.url_canonical').join(';\n')};
  END`,
  `CREATE TRIGGER registry_member_agents_search_au AFTER UPDATE ON registry_member_agents BEGIN
    ${agentRecompute('old.url_canonical').join(';\n')};
    ${agentRecompute('new.url_canonical').join(';\n')};
  END`,
  `CREATE TRIGGER registry_member_agents_search_ad AFTER DELETE ON registry_member_agents BEGIN
    ${agentRecompute('old.url_canonical').join(';\n')};
  END`,
  ...BACKFILL,
]

/** A PL/pgSQL trigger function and its row trigger on `table`. */
const pgTrigger = (table: string, events: string, body: string): string[] => [
  `CREATE OR REPLACE FUNCTION ${table}_search() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    ${body}
    RETURN NULL;
  END
  $fn$`,
  `CREATE TRIGGER ${table}_search AFTER ${events} ON ${table} FOR EACH ROW EXECUTE FUNCTION ${table}_search()`,
]

/** `text` with runs of non-alphanumerics turned into one space (the split FTS5's unicode61 makes). */
const words = (column: string) => `regexp_replace(${column}, '[^[:alnum:]]+', ' ', 'g')`

/** PostgreSQL: the entries table with its generated tsvector and GIN index, the triggers, the backfill. */
export const SEARCH_POSTGRES: readonly string[] = [
  `CREATE TABLE registry_search_entries (
    id BIGSERIAL PRIMARY KEY,
    entity_type TEXT NOT NULL,
    parent_key TEXT NOT NULL,
    entity_key TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    document tsvector GENERATED ALWAYS AS (
      setweight(to_tsvector('simple'::regconfig, ${words('title')}), 'A') ||
      setweight(to_tsvector('simple'::regconfig, ${words('body')}), 'B')) STORED,
    UNIQUE (entity_type, parent_key, entity_key))`,
  // One partial GIN index per category: a category's query scans only its own entities. No pending list
  // (fastupdate off): every write goes into the tree, so a search never scans unmerged entries linearly (with
  // it, 100,000 fresh rows made each query ~50 times slower until a vacuum).
  ...SEARCH_TYPES.map(
    (type) =>
      `CREATE INDEX registry_search_entries_${type} ON registry_search_entries USING GIN (document)
        WITH (fastupdate = off) WHERE entity_type = '${type}'`,
  ),
  ...pgTrigger(
    'registry_brands',
    'INSERT OR UPDATE OR DELETE',
    `IF TG_OP <> 'INSERT' AND (TG_OP = 'DELETE' OR old.domain <> new.domain) THEN
      DELETE FROM registry_search_entries WHERE entity_type = 'brand' AND parent_key = '' AND entity_key = old.domain;
    END IF;
    IF TG_OP <> 'DELETE' THEN
      ${ENTRY} VALUES ('brand', '', new.domain, new.brand_name, ${brandBody('new')}) ${UPSERT};
    END IF;`,
  ),
  ...pgTrigger(
    'registry_publishers',
    'INSERT OR UPDATE OF domain, manager_domain OR DELETE',
    `IF TG_OP <> 'INSERT' AND (TG_OP = 'DELETE' OR old.domain <> new.domain) THEN
      DELETE FROM registry_search_entries WHERE entity_type = 'publisher' AND parent_key = '' AND entity_key = old.domain;
    END IF;
    IF TG_OP <> 'DELETE' THEN
      ${ENTRY} VALUES ('publisher', '', new.domain, new.domain, ${publisherBody('new')}) ${UPSERT};
    END IF;`,
  ),
  ...pgTrigger(
    'registry_properties',
    'INSERT OR UPDATE OF publisher_domain, property_id, name, property_type, identifiers, tags OR DELETE',
    `IF TG_OP <> 'INSERT' AND (TG_OP = 'DELETE' OR old.publisher_domain <> new.publisher_domain OR old.property_id <> new.property_id) THEN
      DELETE FROM registry_search_entries WHERE entity_type = 'property' AND parent_key = old.publisher_domain AND entity_key = old.property_id;
    END IF;
    IF TG_OP <> 'DELETE' THEN
      ${ENTRY} VALUES ('property', new.publisher_domain, new.property_id, new.name, ${propertyBody('new')}) ${UPSERT};
    END IF;`,
  ),
  ...pgTrigger(
    'registry_authorizations',
    'INSERT OR UPDATE OF agent_url_canonical OR DELETE',
    `IF TG_OP <> 'INSERT' THEN
      ${agentGoneWithAuthorization('old')};
    END IF;
    IF TG_OP <> 'DELETE' THEN
      ${agentFromAuthorization('new')};
    END IF;`,
  ),
  ...pgTrigger(
    'registry_member_agents',
    'INSERT OR UPDATE OR DELETE',
    `IF TG_OP <> 'INSERT' THEN
      ${agentRecompute('old.url_canonical').join(';\n')};
    END IF;
    IF TG_OP <> 'DELETE' THEN
      ${agentRecompute('new.url_canonical').join(';\n')};
    END IF;`,
  ),
  ...BACKFILL,
]
