/** Publishers, their properties and authorizations: reads, and the snapshot write that emits feed events. */
import { canonicalAgentUrl } from '../domain/names.js'
import { newId } from '../domain/ids.js'
import { diffPublisher, type PendingEvent } from '../domain/snapshot-diff.js'
import type { FeedEvent, PropertyRecord, PublisherRecord, PublisherSnapshot } from '../domain/types.js'
import { insertMany } from './batch.js'
import { placeholders, type SqlDriver, type SqlExecutor } from '@adwire/sql'
import { appendEvents } from './feed.js'
import { containsPattern, jsonText } from './json.js'
import {
  AUTHORIZATION_COLUMNS,
  PROPERTY_COLUMNS,
  PUBLISHER_COLUMNS,
  toAuthorization,
  toProperty,
  toPublisher,
  tupleToProperty,
  type AuthorizationRow,
  type PropertyRow,
  type PropertyTuple,
  type PublisherRow,
} from './rows.js'

export interface PublisherSummary {
  readonly publisher: PublisherRecord
  readonly property_count: number
  readonly agent_count: number
}

export interface PublisherStore {
  getPublisher(domain: string): Promise<PublisherRecord | undefined>
  getPublishers(domains: readonly string[]): Promise<PublisherRecord[]>
  listPublishers(query: {
    search?: string
    limit: number
    offset: number
  }): Promise<{ items: PublisherSummary[]; total: number }>
  getProperties(domain: string): Promise<PropertyRecord[]>
  /**
   * Replaces what is stored about a publisher with `snapshot` in one transaction and appends the feed events
   * describing the change (none when nothing changed); resolves to those events.
   */
  saveSnapshot(snapshot: PublisherSnapshot, actor: string, now: number): Promise<FeedEvent[]>
  /**
   * Moves a registry-hosted publisher between `community` (hosted, origin not verified) and `hosted` (the origin
   * points at the hosted file), with its properties, and appends a `publisher.adagents_changed` event; no-op
   * (no event) when the publisher is not registry-hosted or already has that source.
   */
  setHostedSource(
    domain: string,
    source: 'hosted' | 'community',
    details: { resolved_url?: string; reason: string },
    actor: string,
    now: number,
  ): Promise<FeedEvent[]>
}

const IDENTIFIER_COLUMNS = ['identifier_type', 'identifier_value', 'publisher_domain', 'property_id']

/** The identifier key stored for lookups: domain-like values are case-insensitive. */
export const identifierKey = (type: string, value: string): [string, string] => [
  type.trim().toLowerCase(),
  /domain|bundle|store_id|app_id/.test(type) ? value.trim().toLowerCase() : value.trim(),
]

async function agentCount(tx: SqlExecutor, canonical: string): Promise<number> {
  const row = await tx.one<{ n: number }>(
    'SELECT CAST(COUNT(*) AS INTEGER) AS n FROM registry_authorizations WHERE agent_url_canonical = ?',
    [canonical],
  )
  return Number(row?.n ?? 0)
}

async function writeSnapshot(
  tx: SqlExecutor,
  snapshot: PublisherSnapshot,
  actor: string,
  now: number,
): Promise<FeedEvent[]> {
  const at = new Date(now).toISOString()
  const domain = snapshot.publisher.domain
  const previousRow = await tx.one<PublisherRow>(
    `SELECT ${PUBLISHER_COLUMNS} FROM registry_publishers WHERE domain = ?`,
    [domain],
  )
  const previousProperties = (
    await tx.all<PropertyRow>(
      `SELECT ${PROPERTY_COLUMNS} FROM registry_properties WHERE publisher_domain = ?`,
      [domain],
    )
  ).map(toProperty)
  const previousAuthorizations = (
    await tx.all<AuthorizationRow>(
      `SELECT ${AUTHORIZATION_COLUMNS} FROM registry_authorizations WHERE publisher_domain = ?`,
      [domain],
    )
  ).map(toAuthorization)

  const rids = new Map(previousProperties.map((property) => [property.property_id, property.rid]))
  for (const property of snapshot.properties)
    if (!rids.has(property.property_id)) rids.set(property.property_id, newId())
  const authorizations = snapshot.authorizations.map((row) => ({
    ...row,
    agent_url_canonical: canonicalAgentUrl(row.agent_url),
  }))
  const previous = {
    ...(previousRow ? { publisher: toPublisher(previousRow) } : {}),
    properties: previousProperties,
    authorizations: previousAuthorizations,
  }
  const pending: PendingEvent[] = diffPublisher(previous, { snapshot, authorizations, rids })

  const before = new Set(previousAuthorizations.map((row) => row.agent_url_canonical))
  const after = new Set(authorizations.map((row) => row.agent_url_canonical))
  for (const canonical of after) {
    if (!before.has(canonical) && (await agentCount(tx, canonical)) === 0) {
      const url = authorizations.find((row) => row.agent_url_canonical === canonical)!.agent_url
      pending.push({
        event_type: 'agent.discovered',
        entity_type: 'agent',
        entity_id: canonical,
        payload: { agent_url: url, type: 'sales', reason: `listed in ${domain}/.well-known/adagents.json` },
      })
    }
  }

  const p = snapshot.publisher
  await tx.run(
    `INSERT INTO registry_publishers (${PUBLISHER_COLUMNS}) VALUES (${placeholders(14)})
     ON CONFLICT (domain) DO UPDATE SET source = excluded.source, document = excluded.document, url = excluded.url,
       resolved_url = excluded.resolved_url, status_code = excluded.status_code, response_bytes = excluded.response_bytes,
       discovery_method = excluded.discovery_method, manager_domain = excluded.manager_domain, valid = excluded.valid,
       contact = excluded.contact, last_validated = excluded.last_validated, updated_at = excluded.updated_at`,
    [
      domain,
      p.source,
      jsonText(p.document),
      p.url ?? null,
      p.resolved_url ?? null,
      p.status_code ?? null,
      p.response_bytes ?? null,
      p.discovery_method ?? null,
      p.manager_domain ?? null,
      p.valid === null ? null : p.valid ? 1 : 0,
      jsonText(p.contact),
      p.last_validated ?? null,
      at,
      at,
    ],
  )
  await tx.run('DELETE FROM registry_property_identifiers WHERE publisher_domain = ?', [domain])
  await tx.run('DELETE FROM registry_properties WHERE publisher_domain = ?', [domain])
  await insertMany(
    tx,
    'registry_properties',
    [...PROPERTY_COLUMNS.split(', '), 'created_at', 'updated_at'],
    snapshot.properties.map((property) => [
      domain,
      property.property_id,
      rids.get(property.property_id)!,
      property.property_type,
      property.name,
      JSON.stringify(property.identifiers),
      JSON.stringify(property.tags),
      property.source,
      at,
      at,
    ]),
  )
  const identifierRows = new Map<string, string[]>()
  for (const property of snapshot.properties)
    for (const identifier of property.identifiers) {
      const [type, value] = identifierKey(identifier.type, identifier.value)
      identifierRows.set(`${type}\u0000${value}\u0000${property.property_id}`, [
        type,
        value,
        domain,
        property.property_id,
      ])
    }
  await insertMany(tx, 'registry_property_identifiers', IDENTIFIER_COLUMNS, [...identifierRows.values()])

  const previousIds = new Map(
    previousAuthorizations.map((row) => [`${row.agent_url_canonical}|${row.property_id ?? ''}`, row]),
  )
  await tx.run('DELETE FROM registry_authorizations WHERE publisher_domain = ?', [domain])
  const seen = new Set<string>()
  const authorizationRows = []
  for (const row of authorizations) {
    const key = `${row.agent_url_canonical}|${row.property_id ?? ''}`
    if (seen.has(key)) continue
    seen.add(key)
    const old = previousIds.get(key)
    authorizationRows.push([
      old?.id ?? newId(),
      row.agent_url,
      row.agent_url_canonical,
      domain,
      row.property_id ?? '',
      row.authorized_for,
      row.authorization_type,
      row.evidence,
      jsonText(row.signing_keys ?? undefined),
      row.effective_from,
      row.effective_until,
      row.source_url,
      old?.created_at ?? at,
      at,
    ])
  }
  await insertMany(tx, 'registry_authorizations', AUTHORIZATION_COLUMNS.split(', '), authorizationRows)

  for (const canonical of before) {
    if (!after.has(canonical) && (await agentCount(tx, canonical)) === 0) {
      const url = previousAuthorizations.find((row) => row.agent_url_canonical === canonical)!.agent_url
      pending.push({
        event_type: 'agent.removed',
        entity_type: 'agent',
        entity_id: canonical,
        payload: { agent_url: url, reason: `no publisher lists it any more (last: ${domain})` },
      })
    }
  }
  return appendEvents(tx, pending, actor, now)
}

/** The publisher statements on `db`. */
export function publisherStore(db: SqlDriver): PublisherStore {
  return {
    async getPublisher(domain) {
      const row = await db.one<PublisherRow>(
        `SELECT ${PUBLISHER_COLUMNS} FROM registry_publishers WHERE domain = ?`,
        [domain],
      )
      return row && toPublisher(row)
    },
    async getPublishers(domains) {
      if (domains.length === 0) return []
      const rows = await db.all<PublisherRow>(
        `SELECT ${PUBLISHER_COLUMNS} FROM registry_publishers WHERE domain IN (${placeholders(domains.length)})`,
        domains,
      )
      return rows.map(toPublisher)
    },
    async listPublishers({ search, limit, offset }) {
      const clause = search ? "WHERE lower(p.domain) LIKE ? ESCAPE '\\'" : ''
      const params = search ? [containsPattern(search)] : []
      const rows = await db.all<PublisherRow & { property_count: number; agent_count: number }>(
        `SELECT ${PUBLISHER_COLUMNS.split(', ')
          .map((column) => `p.${column}`)
          .join(', ')},
           (SELECT CAST(COUNT(*) AS INTEGER) FROM registry_properties r WHERE r.publisher_domain = p.domain) AS property_count,
           (SELECT CAST(COUNT(DISTINCT a.agent_url_canonical) AS INTEGER) FROM registry_authorizations a WHERE a.publisher_domain = p.domain) AS agent_count
         FROM registry_publishers p ${clause} ORDER BY p.domain LIMIT ? OFFSET ?`,
        [...params, limit, offset],
      )
      const count = await db.one<{ n: number }>(
        `SELECT CAST(COUNT(*) AS INTEGER) AS n FROM registry_publishers p ${clause}`,
        params,
      )
      return {
        items: rows.map((row) => ({
          publisher: toPublisher(row),
          property_count: Number(row.property_count),
          agent_count: Number(row.agent_count),
        })),
        total: Number(count?.n ?? 0),
      }
    },
    async getProperties(domain) {
      // Index order (registry_properties_listing), read as tuples: a publisher's whole list can be large.
      const rows = await db.tuples<PropertyTuple>(
        `SELECT ${PROPERTY_COLUMNS} FROM registry_properties WHERE publisher_domain = ? ORDER BY property_type, name, property_id`,
        [domain],
      )
      return rows.map(tupleToProperty)
    },
    saveSnapshot: (snapshot, actor, now) => db.transaction((tx) => writeSnapshot(tx, snapshot, actor, now)),
    setHostedSource(domain, source, details, actor, now) {
      return db.transaction(async (tx) => {
        const at = new Date(now).toISOString()
        const changed = await tx.run(
          `UPDATE registry_publishers SET source = ?, discovery_method = ?, resolved_url = ?, updated_at = ?
           WHERE domain = ? AND source IN ('hosted', 'community') AND source <> ?`,
          [
            source,
            source === 'hosted' ? 'authoritative_location' : null,
            source === 'hosted' ? (details.resolved_url ?? null) : null,
            at,
            domain,
            source,
          ],
        )
        if (changed === 0) return []
        await tx.run(
          "UPDATE registry_properties SET source = ?, updated_at = ? WHERE publisher_domain = ? AND source IN ('hosted', 'community')",
          [source, at, domain],
        )
        return appendEvents(
          tx,
          [
            {
              event_type: 'publisher.adagents_changed',
              entity_type: 'publisher',
              entity_id: domain,
              payload: {
                publisher_domain: domain,
                domain,
                changed_fields: ['origin_verified'],
                source: source === 'hosted' ? 'aao_hosted_verified' : 'aao_hosted',
                reason: details.reason,
              },
            },
          ],
          actor,
          now,
        )
      })
    },
  }
}
