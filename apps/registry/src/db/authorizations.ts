/**
 * Authorization lookups. A row with `property_id = ''` authorizes the agent for every property of the
 * publisher; rows outside their `effective_from`/`effective_until` window do not count.
 */
import type { AuthorizationRecord, PropertyRecord } from '../domain/types.js'
import type { SqlDriver } from '@adwire/sql'
import { identifierKey } from './publishers.js'
import {
  AUTHORIZATION_COLUMNS,
  PROPERTY_COLUMNS,
  toAuthorization,
  toProperty,
  tupleToProperty,
  type AuthorizationRow,
  type PropertyRow,
  type PropertyTuple,
} from './rows.js'

const IN_WINDOW =
  '(a.effective_from IS NULL OR a.effective_from <= ?) AND (a.effective_until IS NULL OR a.effective_until > ?)'

export interface AgentOnIdentifier {
  readonly agent_url: string
  readonly publisher_domain: string
  readonly authorized_for: string | null
}

export interface DirectoryAgent {
  readonly agent_url: string
  readonly agent_url_canonical: string
  readonly publisher_domains: string[]
  readonly authorized_for: string | null
}

export interface AuthorizationStore {
  /** Whether the agent may sell a property carrying this identifier, at `nowIso`. */
  isAuthorizedForIdentifier(
    agentCanonical: string,
    type: string,
    value: string,
    nowIso: string,
  ): Promise<boolean>
  /** The agents authorized for properties carrying this identifier. */
  agentsForIdentifier(type: string, value: string, nowIso: string): Promise<AgentOnIdentifier[]>
  /** The properties of `domain` the agent is authorized for, sorted by type then name. */
  authorizedProperties(agentCanonical: string, domain: string, nowIso: string): Promise<PropertyRecord[]>
  /** The distinct agents a publisher authorizes (one row each). */
  agentsOfPublisher(domain: string): Promise<Array<{ agent_url: string; authorized_for: string | null }>>
  /** The properties carrying this identifier. */
  propertiesWithIdentifier(type: string, value: string): Promise<PropertyRecord[]>
  forAgent(agentCanonical: string): Promise<AuthorizationRecord[]>
  forPublisher(domain: string): Promise<AuthorizationRecord[]>
  all(): Promise<AuthorizationRecord[]>
  agentDomains(agentCanonical: string): Promise<string[]>
  directory(): Promise<DirectoryAgent[]>
}

/** The authorization statements on `db`. */
export function authorizationStore(db: SqlDriver): AuthorizationStore {
  return {
    async isAuthorizedForIdentifier(agentCanonical, type, value, nowIso) {
      const [key, normalized] = identifierKey(type, value)
      // Two point lookups on the unique (agent, publisher, property) index: the property's own row, or the
      // publisher-wide row. (An OR inside one join defeats the index on SQLite.)
      const row = await db.one<{ hit: number }>(
        `SELECT 1 AS hit FROM registry_property_identifiers i
         WHERE i.identifier_type = ? AND i.identifier_value = ? AND (
           EXISTS (SELECT 1 FROM registry_authorizations a WHERE a.agent_url_canonical = ?
             AND a.publisher_domain = i.publisher_domain AND a.property_id = i.property_id AND ${IN_WINDOW})
           OR EXISTS (SELECT 1 FROM registry_authorizations a WHERE a.agent_url_canonical = ?
             AND a.publisher_domain = i.publisher_domain AND a.property_id = '' AND ${IN_WINDOW}))
         LIMIT 1`,
        [key, normalized, agentCanonical, nowIso, nowIso, agentCanonical, nowIso, nowIso],
      )
      return row !== undefined
    },
    async agentsForIdentifier(type, value, nowIso) {
      const [key, normalized] = identifierKey(type, value)
      return db.all<AgentOnIdentifier>(
        `SELECT DISTINCT a.agent_url, a.publisher_domain, a.authorized_for FROM registry_property_identifiers i
         JOIN registry_authorizations a ON a.publisher_domain = i.publisher_domain
           AND (a.property_id = i.property_id OR a.property_id = '')
         WHERE i.identifier_type = ? AND i.identifier_value = ? AND ${IN_WINDOW}
         ORDER BY a.agent_url, a.publisher_domain`,
        [key, normalized, nowIso, nowIso],
      )
    },
    async authorizedProperties(agentCanonical, domain, nowIso) {
      const grants = await db.all<{ property_id: string }>(
        `SELECT a.property_id FROM registry_authorizations a
         WHERE a.agent_url_canonical = ? AND a.publisher_domain = ? AND ${IN_WINDOW}`,
        [agentCanonical, domain, nowIso, nowIso],
      )
      if (grants.length === 0) return []
      // Read in index order (registry_properties_listing), as tuples: this is the expand path's bulk read.
      const rows = await db.tuples<PropertyTuple>(
        `SELECT ${PROPERTY_COLUMNS} FROM registry_properties WHERE publisher_domain = ?
         ORDER BY property_type, name, property_id`,
        [domain],
      )
      const ids = new Set(grants.map((grant) => grant.property_id))
      return (ids.has('') ? rows : rows.filter((row) => ids.has(row[1]))).map(tupleToProperty)
    },
    async agentsOfPublisher(domain) {
      return db.all<{ agent_url: string; authorized_for: string | null }>(
        `SELECT MIN(agent_url) AS agent_url, MIN(authorized_for) AS authorized_for FROM registry_authorizations
         WHERE publisher_domain = ? GROUP BY agent_url_canonical ORDER BY agent_url_canonical`,
        [domain],
      )
    },
    async propertiesWithIdentifier(type, value) {
      const [key, normalized] = identifierKey(type, value)
      const rows = await db.all<PropertyRow>(
        `SELECT ${PROPERTY_COLUMNS.split(', ')
          .map((column) => `r.${column}`)
          .join(', ')} FROM registry_property_identifiers i
         JOIN registry_properties r ON r.publisher_domain = i.publisher_domain AND r.property_id = i.property_id
         WHERE i.identifier_type = ? AND i.identifier_value = ? ORDER BY r.publisher_domain, r.property_id`,
        [key, normalized],
      )
      return rows.map(toProperty)
    },
    async forAgent(agentCanonical) {
      const rows = await db.all<AuthorizationRow>(
        `SELECT ${AUTHORIZATION_COLUMNS} FROM registry_authorizations WHERE agent_url_canonical = ? ORDER BY publisher_domain, property_id`,
        [agentCanonical],
      )
      return rows.map(toAuthorization)
    },
    async forPublisher(domain) {
      const rows = await db.all<AuthorizationRow>(
        `SELECT ${AUTHORIZATION_COLUMNS} FROM registry_authorizations WHERE publisher_domain = ? ORDER BY agent_url_canonical, property_id`,
        [domain],
      )
      return rows.map(toAuthorization)
    },
    async all() {
      const rows = await db.all<AuthorizationRow>(
        `SELECT ${AUTHORIZATION_COLUMNS} FROM registry_authorizations ORDER BY agent_url_canonical, publisher_domain, property_id`,
      )
      return rows.map(toAuthorization)
    },
    async agentDomains(agentCanonical) {
      const rows = await db.all<{ publisher_domain: string }>(
        'SELECT DISTINCT publisher_domain FROM registry_authorizations WHERE agent_url_canonical = ? ORDER BY publisher_domain',
        [agentCanonical],
      )
      return rows.map((row) => row.publisher_domain)
    },
    async directory() {
      const rows = await db.all<{
        agent_url: string
        agent_url_canonical: string
        publisher_domain: string
        authorized_for: string | null
      }>(
        `SELECT agent_url_canonical, MIN(agent_url) AS agent_url, publisher_domain, MIN(authorized_for) AS authorized_for
         FROM registry_authorizations GROUP BY agent_url_canonical, publisher_domain ORDER BY agent_url_canonical, publisher_domain`,
      )
      const agents = new Map<string, DirectoryAgent>()
      for (const row of rows) {
        const agent = agents.get(row.agent_url_canonical) ?? {
          agent_url: row.agent_url,
          agent_url_canonical: row.agent_url_canonical,
          publisher_domains: [],
          authorized_for: row.authorized_for,
        }
        agent.publisher_domains.push(row.publisher_domain)
        agents.set(row.agent_url_canonical, agent)
      }
      return [...agents.values()]
    },
  }
}
