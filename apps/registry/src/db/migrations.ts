/**
 * The registry's versioned migrations, one list for both dialects. Each version runs once, in order, inside a
 * transaction, and is recorded in `registry_migrations`; a database migrated by a newer registry is refused.
 * Column types are chosen to read the same in both: TEXT (JSON, ISO 8601 instants), INTEGER (counts, 0/1).
 */
import { REGISTRY_POLICY_INSERTS } from './policies.js'
import { DISCOVERY_TABLES, SEARCH_POSTGRES, SEARCH_SQLITE } from './search-schema.js'

export interface Migration {
  readonly version: number
  readonly name: string
  readonly statements: readonly string[]
  /** Statements of one dialect only, run after `statements` (full-text indexes, triggers). */
  readonly dialects?: { readonly sqlite?: readonly string[]; readonly postgres?: readonly string[] }
}

/** Every migration, oldest first. Append only; never edit a released one. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'brands, publishers, properties, authorizations, agents, feed, crawl requests',
    statements: [
      `CREATE TABLE IF NOT EXISTS registry_brands (
        domain TEXT PRIMARY KEY,
        id TEXT NOT NULL,
        brand_name TEXT NOT NULL,
        source TEXT NOT NULL,
        names TEXT,
        keller_type TEXT,
        parent_brand TEXT,
        house_domain TEXT,
        house_name TEXT,
        brand_agent_url TEXT,
        manifest TEXT,
        document TEXT,
        document_url TEXT,
        status_code INTEGER,
        verified INTEGER NOT NULL DEFAULT 0,
        fetched_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS registry_revisions (
        entity_kind TEXT NOT NULL,
        domain TEXT NOT NULL,
        revision_number INTEGER NOT NULL,
        editor_name TEXT NOT NULL,
        edit_summary TEXT NOT NULL,
        source TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (entity_kind, domain, revision_number))`,
      `CREATE TABLE IF NOT EXISTS registry_publishers (
        domain TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        document TEXT,
        url TEXT,
        resolved_url TEXT,
        status_code INTEGER,
        response_bytes INTEGER,
        discovery_method TEXT,
        manager_domain TEXT,
        valid INTEGER,
        contact TEXT,
        last_validated TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS registry_properties (
        publisher_domain TEXT NOT NULL,
        property_id TEXT NOT NULL,
        rid TEXT NOT NULL,
        property_type TEXT NOT NULL,
        name TEXT NOT NULL,
        identifiers TEXT NOT NULL,
        tags TEXT NOT NULL,
        source TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (publisher_domain, property_id))`,
      `CREATE TABLE IF NOT EXISTS registry_property_identifiers (
        identifier_type TEXT NOT NULL,
        identifier_value TEXT NOT NULL,
        publisher_domain TEXT NOT NULL,
        property_id TEXT NOT NULL,
        PRIMARY KEY (identifier_type, identifier_value, publisher_domain, property_id))`,
      `CREATE INDEX IF NOT EXISTS registry_property_identifiers_property
        ON registry_property_identifiers (publisher_domain, property_id)`,
      `CREATE TABLE IF NOT EXISTS registry_authorizations (
        id TEXT PRIMARY KEY,
        agent_url TEXT NOT NULL,
        agent_url_canonical TEXT NOT NULL,
        publisher_domain TEXT NOT NULL,
        property_id TEXT NOT NULL,
        authorized_for TEXT,
        authorization_type TEXT,
        evidence TEXT NOT NULL,
        signing_keys TEXT,
        effective_from TEXT,
        effective_until TEXT,
        source_url TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL)`,
      `CREATE UNIQUE INDEX IF NOT EXISTS registry_authorizations_key
        ON registry_authorizations (agent_url_canonical, publisher_domain, property_id)`,
      `CREATE INDEX IF NOT EXISTS registry_authorizations_publisher
        ON registry_authorizations (publisher_domain)`,
      `CREATE TABLE IF NOT EXISTS registry_member_agents (
        org_id TEXT NOT NULL,
        url TEXT NOT NULL,
        url_canonical TEXT NOT NULL,
        name TEXT,
        type TEXT NOT NULL,
        visibility TEXT NOT NULL,
        health_check_url TEXT,
        position INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (org_id, url_canonical))`,
      `CREATE TABLE IF NOT EXISTS registry_org_profiles (
        org_id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        is_personal INTEGER NOT NULL,
        company_type TEXT,
        revenue_tier TEXT,
        marketing_opt_in INTEGER NOT NULL,
        created_at TEXT NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS registry_feed_events (
        event_id TEXT PRIMARY KEY,
        event_type TEXT NOT NULL,
        entity_type TEXT NOT NULL,
        entity_id TEXT NOT NULL,
        payload TEXT NOT NULL,
        actor TEXT NOT NULL,
        created_at TEXT NOT NULL)`,
      `CREATE INDEX IF NOT EXISTS registry_feed_events_created ON registry_feed_events (created_at)`,
      `CREATE TABLE IF NOT EXISTS registry_crawl_requests (
        id TEXT PRIMARY KEY,
        domain TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        max_attempts INTEGER NOT NULL,
        requested_by TEXT,
        requested_at TEXT NOT NULL,
        started_at TEXT,
        last_attempted_at TEXT,
        completed_at TEXT,
        next_attempt_at TEXT,
        last_error_code TEXT)`,
      `CREATE TABLE IF NOT EXISTS registry_check_reports (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL)`,
    ],
  },
  {
    version: 2,
    name: 'hosted domains: origin verification state, owners and claims',
    statements: [
      `CREATE TABLE IF NOT EXISTS registry_hosted_domains (
        domain TEXT PRIMARY KEY,
        owner_org_id TEXT,
        owner_bound_at TEXT,
        origin_verified_at TEXT,
        origin_last_checked_at TEXT,
        last_reason TEXT,
        last_detail TEXT)`,
      `CREATE TABLE IF NOT EXISTS registry_domain_claims (
        token TEXT PRIMARY KEY,
        domain TEXT NOT NULL,
        org_id TEXT NOT NULL,
        created_at TEXT NOT NULL)`,
      `CREATE INDEX IF NOT EXISTS registry_domain_claims_domain ON registry_domain_claims (domain)`,
    ],
  },
  {
    version: 3,
    name: 'member profiles (auto-created by the first agent registration)',
    statements: [
      `CREATE TABLE IF NOT EXISTS registry_member_profiles (
        org_id TEXT PRIMARY KEY,
        display_name TEXT NOT NULL,
        is_public INTEGER NOT NULL,
        created_at TEXT NOT NULL)`,
      // Organizations that registered agents before profiles existed already have one.
      `INSERT INTO registry_member_profiles (org_id, display_name, is_public, created_at)
        SELECT a.org_id, COALESCE(MAX(o.name), a.org_id), 0, MIN(a.created_at)
        FROM registry_member_agents a LEFT JOIN registry_org_profiles o ON o.org_id = a.org_id
        GROUP BY a.org_id`,
    ],
  },
  {
    version: 4,
    name: 'publisher properties in listing order (resolve and expand read them sorted, without a sort step)',
    statements: [
      `CREATE INDEX IF NOT EXISTS registry_properties_listing
        ON registry_properties (publisher_domain, property_type, name, property_id)`,
    ],
  },
  {
    version: 5,
    name: 'community brands remember the organization that saved them (only it may edit them)',
    statements: [`ALTER TABLE registry_brands ADD COLUMN owner_org_id TEXT`],
  },
  {
    version: 6,
    name: 'cross-entity search index (FTS5 / tsvector + GIN, kept by triggers), brand crawl and manager queues',
    statements: DISCOVERY_TABLES,
    dialects: { sqlite: SEARCH_SQLITE, postgres: SEARCH_POSTGRES },
  },
  {
    version: 7,
    name: 'community mirrors and proposals, moderators, policies, the property catalog and its disputes',
    statements: [
      // Organizations whose members are registry moderators (review and publish community mirrors).
      `CREATE TABLE IF NOT EXISTS registry_moderators (
        org_id TEXT PRIMARY KEY,
        granted_at TEXT NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS registry_community_mirrors (
        platform TEXT PRIMARY KEY,
        document TEXT NOT NULL,
        catalog_etag TEXT,
        superseded_by TEXT,
        digest TEXT NOT NULL,
        publisher_domains TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS registry_mirror_proposals (
        id TEXT PRIMARY KEY,
        platform TEXT NOT NULL,
        document TEXT NOT NULL,
        catalog_etag TEXT,
        superseded_by TEXT,
        proposal_digest TEXT NOT NULL,
        base_mirror_digest TEXT,
        status TEXT NOT NULL,
        proposed_by_org_id TEXT,
        proposed_by_user_id TEXT,
        proposed_at TEXT NOT NULL,
        reviewed_at TEXT,
        reviewed_by TEXT,
        review_notes TEXT,
        published_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL)`,
      `CREATE INDEX IF NOT EXISTS registry_mirror_proposals_status
        ON registry_mirror_proposals (status, proposed_at)`,
      `CREATE INDEX IF NOT EXISTS registry_mirror_proposals_org
        ON registry_mirror_proposals (proposed_by_org_id, platform, status)`,
      `CREATE TABLE IF NOT EXISTS registry_policies (
        policy_id TEXT PRIMARY KEY,
        version TEXT NOT NULL,
        name TEXT NOT NULL,
        description TEXT,
        category TEXT NOT NULL,
        enforcement TEXT NOT NULL,
        jurisdictions TEXT NOT NULL,
        region_aliases TEXT NOT NULL,
        policy_categories TEXT NOT NULL,
        channels TEXT,
        governance_domains TEXT NOT NULL,
        effective_date TEXT,
        sunset_date TEXT,
        source_url TEXT,
        source_name TEXT,
        policy TEXT NOT NULL,
        guidance TEXT,
        exemplars TEXT,
        ext TEXT,
        source_type TEXT NOT NULL,
        review_status TEXT NOT NULL,
        owner_org_id TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS registry_catalog_entries (
        property_rid TEXT PRIMARY KEY,
        property_id TEXT,
        classification TEXT NOT NULL,
        source TEXT NOT NULL,
        status TEXT NOT NULL,
        adagents_url TEXT,
        created_by TEXT,
        origin TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        source_updated_at TEXT NOT NULL)`,
      `CREATE INDEX IF NOT EXISTS registry_catalog_entries_updated
        ON registry_catalog_entries (updated_at, property_rid)`,
      `CREATE INDEX IF NOT EXISTS registry_catalog_entries_origin ON registry_catalog_entries (origin)`,
      `CREATE TABLE IF NOT EXISTS registry_catalog_links (
        identifier_type TEXT NOT NULL,
        identifier_value TEXT NOT NULL,
        property_rid TEXT NOT NULL,
        strength TEXT NOT NULL,
        status TEXT NOT NULL,
        provenance_type TEXT NOT NULL,
        provenance_context TEXT,
        created_by TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (identifier_type, identifier_value))`,
      `CREATE INDEX IF NOT EXISTS registry_catalog_links_rid ON registry_catalog_links (property_rid)`,
      `CREATE INDEX IF NOT EXISTS registry_catalog_links_value ON registry_catalog_links (identifier_value)`,
      `CREATE TABLE IF NOT EXISTS registry_catalog_activity (
        id TEXT PRIMARY KEY,
        property_rid TEXT NOT NULL,
        org_id TEXT,
        provenance_type TEXT NOT NULL,
        provenance_context TEXT,
        created_at TEXT NOT NULL)`,
      `CREATE INDEX IF NOT EXISTS registry_catalog_activity_rid
        ON registry_catalog_activity (property_rid, created_at)`,
      `CREATE TABLE IF NOT EXISTS registry_catalog_disputes (
        id TEXT PRIMARY KEY,
        dispute_type TEXT NOT NULL,
        subject_type TEXT NOT NULL,
        subject_value TEXT NOT NULL,
        claim TEXT NOT NULL,
        evidence TEXT,
        status TEXT NOT NULL,
        action_taken TEXT NOT NULL,
        reason TEXT NOT NULL,
        filed_by_org_id TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL)`,
      ...REGISTRY_POLICY_INSERTS,
    ],
  },
  {
    version: 8,
    name: 'compliance runs: jobs, per-storyboard verdicts and per-step diagnostics',
    statements: [
      `CREATE TABLE IF NOT EXISTS registry_compliance_runs (
        id TEXT PRIMARY KEY,
        agent_url TEXT NOT NULL,
        agent_url_canonical TEXT NOT NULL,
        org_id TEXT,
        trigger_kind TEXT NOT NULL,
        storyboard_ids TEXT NOT NULL,
        options TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        lease_until TEXT,
        overall_status TEXT NOT NULL,
        headline TEXT,
        tracks_passed INTEGER NOT NULL,
        tracks_failed INTEGER NOT NULL,
        tracks_skipped INTEGER NOT NULL,
        tracks_partial INTEGER NOT NULL,
        tracks TEXT,
        result TEXT,
        error TEXT,
        adcp_version TEXT,
        requested_compliance_target TEXT,
        total_duration_ms INTEGER,
        created_at TEXT NOT NULL,
        started_at TEXT,
        finished_at TEXT)`,
      `CREATE INDEX IF NOT EXISTS registry_compliance_runs_agent
        ON registry_compliance_runs (agent_url_canonical, created_at)`,
      `CREATE INDEX IF NOT EXISTS registry_compliance_runs_state ON registry_compliance_runs (state, created_at)`,
      `CREATE TABLE IF NOT EXISTS registry_compliance_storyboard_results (
        run_id TEXT NOT NULL,
        storyboard_id TEXT NOT NULL,
        agent_url TEXT NOT NULL,
        agent_url_canonical TEXT NOT NULL,
        title TEXT NOT NULL,
        category TEXT,
        track TEXT,
        status TEXT NOT NULL,
        steps_passed INTEGER NOT NULL,
        steps_total INTEGER NOT NULL,
        failure_count INTEGER NOT NULL,
        skipped_count INTEGER NOT NULL,
        first_failed_step_id TEXT,
        first_failed_step_title TEXT,
        first_failed_step_task TEXT,
        first_failure_message TEXT,
        first_failure_validations TEXT,
        adcp_version TEXT,
        requested_compliance_target TEXT,
        tested_at TEXT NOT NULL,
        PRIMARY KEY (run_id, storyboard_id))`,
      `CREATE INDEX IF NOT EXISTS registry_compliance_storyboard_results_agent
        ON registry_compliance_storyboard_results (agent_url_canonical, storyboard_id, tested_at)`,
      `CREATE TABLE IF NOT EXISTS registry_compliance_diagnostics (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        agent_url TEXT NOT NULL,
        storyboard_id TEXT NOT NULL,
        phase_id TEXT NOT NULL,
        step_id TEXT NOT NULL,
        task TEXT NOT NULL,
        step_passed INTEGER NOT NULL,
        duration_ms INTEGER,
        request_url TEXT,
        request TEXT,
        response_status INTEGER,
        response TEXT,
        error_text TEXT,
        adcp_error TEXT,
        failed_validations TEXT,
        served_by_agent_url TEXT,
        captured_at TEXT NOT NULL)`,
      `CREATE INDEX IF NOT EXISTS registry_compliance_diagnostics_run
        ON registry_compliance_diagnostics (run_id, position)`,
    ],
  },
  {
    version: 9,
    name: 'agent compliance status: settings and monitoring schedule, storyboard outcomes, launched runs, outbound request log, encrypted agent credentials',
    statements: [
      `CREATE TABLE IF NOT EXISTS registry_agent_compliance (
        agent_url_canonical TEXT PRIMARY KEY,
        agent_url TEXT NOT NULL,
        lifecycle_stage TEXT NOT NULL,
        compliance_opt_out INTEGER NOT NULL DEFAULT 0,
        requalify_since TEXT,
        monitoring_paused INTEGER NOT NULL DEFAULT 0,
        monitoring_paused_at TEXT,
        check_interval_hours INTEGER NOT NULL,
        last_checked_at TEXT,
        next_check_at TEXT,
        last_status TEXT,
        status_changed_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL)`,
      `CREATE INDEX IF NOT EXISTS registry_agent_compliance_due ON registry_agent_compliance (next_check_at)`,
      `CREATE TABLE IF NOT EXISTS registry_compliance_outcomes (
        run_id TEXT NOT NULL,
        storyboard_id TEXT NOT NULL,
        agent_url_canonical TEXT NOT NULL,
        agent_url TEXT NOT NULL,
        adcp_version TEXT NOT NULL,
        status TEXT NOT NULL,
        run_trigger TEXT NOT NULL,
        steps_passed INTEGER NOT NULL,
        steps_failed INTEGER NOT NULL,
        steps_skipped INTEGER NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        PRIMARY KEY (run_id, storyboard_id))`,
      `CREATE INDEX IF NOT EXISTS registry_compliance_outcomes_agent
        ON registry_compliance_outcomes (agent_url_canonical, finished_at)`,
      `CREATE TABLE IF NOT EXISTS registry_compliance_launches (
        run_id TEXT PRIMARY KEY,
        agent_url_canonical TEXT NOT NULL,
        run_trigger TEXT NOT NULL,
        full_suite INTEGER NOT NULL,
        created_at TEXT NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS registry_agent_requests (
        id TEXT PRIMARY KEY,
        agent_url_canonical TEXT NOT NULL,
        agent_url TEXT NOT NULL,
        request_type TEXT NOT NULL,
        user_agent TEXT NOT NULL,
        response_time_ms INTEGER,
        success INTEGER NOT NULL,
        error_message TEXT,
        created_at TEXT NOT NULL)`,
      `CREATE INDEX IF NOT EXISTS registry_agent_requests_agent
        ON registry_agent_requests (agent_url_canonical, created_at)`,
      `CREATE TABLE IF NOT EXISTS registry_agent_credentials (
        org_id TEXT NOT NULL,
        agent_url_canonical TEXT NOT NULL,
        agent_url TEXT NOT NULL,
        agent_context_id TEXT NOT NULL,
        auth_type TEXT NOT NULL,
        token_box TEXT,
        client_credentials_box TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (org_id, agent_url_canonical))`,
    ],
  },
  {
    version: 10,
    name: 'resource owners: the organization that owns a community property, and the one that proved control of an agent URL',
    statements: [
      `CREATE TABLE IF NOT EXISTS registry_resource_owners (
        kind TEXT NOT NULL,
        resource TEXT NOT NULL,
        org_id TEXT NOT NULL,
        proof TEXT NOT NULL,
        proven_at TEXT NOT NULL,
        PRIMARY KEY (kind, resource))`,
    ],
  },
  {
    version: 11,
    name: 'crawl requests leased (the lease queue of @adwire/sql): a request left running by a stopped registry runs again',
    statements: [
      `ALTER TABLE registry_crawl_requests ADD COLUMN lease_until TEXT`,
      `CREATE INDEX IF NOT EXISTS registry_crawl_requests_ready ON registry_crawl_requests (status, requested_at)`,
    ],
  },
]

/** The newest version this code knows. */
export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version

export const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS registry_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL)`

/** Refuses a database that a newer registry has migrated. */
export function assertKnownVersion(applied: readonly number[]): void {
  const newest = Math.max(0, ...applied)
  if (newest > LATEST_VERSION) {
    throw new Error(
      `the registry tables are at version ${newest}; this registry knows up to ${LATEST_VERSION}`,
    )
  }
}
