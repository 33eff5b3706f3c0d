/**
 * What changed between the stored state of a publisher and a new snapshot of it, as change-feed events
 * (adcp-notes §1.4.5 event types). Authorization events are per (agent, publisher): `granted` when the agent
 * gains its first authorization there, `revoked` when it loses its last, `modified` when its property set,
 * `authorized_for`, authorization type, keys or window change. Their payload carries `authorization_type` (the
 * official SDK's `RegistrySync` indexes no grant without it): the adagents.json variant of the agent's entry, and
 * `publisher_properties` with an `all` selector for an entry that names none (it grants the whole publisher).
 */
import type { AuthorizationRecord, PropertyRecord, PublisherRecord, PublisherSnapshot } from './types.js'

/** An event before it gets its id and time. */
export interface PendingEvent {
  readonly event_type: string
  readonly entity_type: string
  readonly entity_id: string
  readonly payload: Record<string, unknown>
}

type NewAuthorization = PublisherSnapshot['authorizations'][number] & { agent_url_canonical: string }

interface AgentGrant {
  agent_url: string
  authorized_for: string | null
  /** The adagents.json variant of the agent's (first) entry; `null` for an entry that names none. */
  authorization_type: string | null
  property_ids: string[]
  signing_keys: string
  window: string
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

function grantsByAgent(
  rows: readonly Pick<
    AuthorizationRecord,
    | 'agent_url'
    | 'agent_url_canonical'
    | 'property_id'
    | 'authorized_for'
    | 'authorization_type'
    | 'signing_keys'
    | 'effective_from'
    | 'effective_until'
  >[],
): Map<string, AgentGrant> {
  const grants = new Map<string, AgentGrant>()
  for (const row of rows) {
    let grant = grants.get(row.agent_url_canonical)
    if (!grant) {
      grant = {
        agent_url: row.agent_url,
        authorized_for: row.authorized_for,
        authorization_type: row.authorization_type ?? null,
        property_ids: [],
        signing_keys: JSON.stringify(row.signing_keys ?? null),
        window: `${row.effective_from ?? ''}|${row.effective_until ?? ''}`,
      }
      grants.set(row.agent_url_canonical, grant)
    }
    grant.property_ids.push(row.property_id ?? '*')
  }
  for (const grant of grants.values()) grant.property_ids.sort()
  return grants
}

function propertyChanges(before: PropertyRecord, after: Omit<PropertyRecord, 'rid'>): string[] {
  const changed: string[] = []
  if (before.name !== after.name) changed.push('name')
  if (before.property_type !== after.property_type) changed.push('property_type')
  if (!sameJson(before.identifiers, after.identifiers)) changed.push('identifiers')
  if (!sameJson(before.tags, after.tags)) changed.push('tags')
  return changed
}

/**
 * The events that turn `previous` into `next`. `rids` gives the stored rid of each kept property and a new
 * one for each created property (the caller allocates them).
 */
export function diffPublisher(
  previous: {
    publisher?: PublisherRecord
    properties: readonly PropertyRecord[]
    authorizations: readonly AuthorizationRecord[]
  },
  next: {
    snapshot: PublisherSnapshot
    authorizations: readonly NewAuthorization[]
    rids: ReadonlyMap<string, string>
  },
): PendingEvent[] {
  const domain = next.snapshot.publisher.domain
  const events: PendingEvent[] = []
  const before = new Map(previous.properties.map((property) => [property.property_id, property]))
  const after = new Map(next.snapshot.properties.map((property) => [property.property_id, property]))
  let added = 0
  let removed = 0
  for (const [id, property] of after) {
    const rid = next.rids.get(id)!
    const old = before.get(id)
    const base = {
      property_rid: rid,
      publisher_domain: domain,
      identifiers: property.identifiers,
      source: 'authoritative',
    }
    if (!old) {
      added += 1
      events.push({
        event_type: 'property.created',
        entity_type: 'property',
        entity_id: rid,
        payload: { ...base, property: { ...property } },
      })
    } else {
      const changed = propertyChanges(old, property)
      if (changed.length > 0)
        events.push({
          event_type: 'property.updated',
          entity_type: 'property',
          entity_id: rid,
          payload: { ...base, property: { ...property }, changed_fields: changed },
        })
    }
  }
  for (const [id, old] of before) {
    if (after.has(id)) continue
    removed += 1
    events.push({
      event_type: 'property.stale',
      entity_type: 'property',
      entity_id: old.rid,
      payload: {
        property_rid: old.rid,
        publisher_domain: domain,
        identifiers: old.identifiers,
        reason: 'removed_from_adagents_json',
      },
    })
  }

  const oldGrants = grantsByAgent(previous.authorizations)
  const newGrants = grantsByAgent(next.authorizations)
  const agentsAdded: string[] = []
  const agentsRemoved: string[] = []
  for (const [canonical, grant] of newGrants) {
    const propertyIds = grant.property_ids.filter((id) => id !== '*')
    const signingKeys = JSON.parse(grant.signing_keys) as unknown
    const payload = {
      agent_url: grant.agent_url,
      agent_url_canonical: canonical,
      publisher_domain: domain,
      authorization_type: grant.authorization_type ?? 'publisher_properties',
      ...(grant.authorization_type === null
        ? { publisher_properties: [{ publisher_domain: domain, selection_type: 'all' }] }
        : {}),
      authorized_for: grant.authorized_for,
      // The schema's lists have at least one item: a publisher-wide grant names no property id.
      ...(propertyIds.length > 0 ? { property_ids: propertyIds } : {}),
      ...(Array.isArray(signingKeys) && signingKeys.length > 0 ? { signing_keys: signingKeys } : {}),
      evidence: 'adagents_json',
    }
    const old = oldGrants.get(canonical)
    if (!old) {
      agentsAdded.push(grant.agent_url)
      events.push({
        event_type: 'authorization.granted',
        entity_type: 'authorization',
        entity_id: `${canonical}|${domain}`,
        payload,
      })
    } else if (
      old.authorized_for !== grant.authorized_for ||
      old.authorization_type !== grant.authorization_type ||
      !sameJson(old.property_ids, grant.property_ids) ||
      old.signing_keys !== grant.signing_keys ||
      old.window !== grant.window
    ) {
      events.push({
        event_type: 'authorization.modified',
        entity_type: 'authorization',
        entity_id: `${canonical}|${domain}`,
        payload,
      })
    }
  }
  for (const [canonical, grant] of oldGrants) {
    if (newGrants.has(canonical)) continue
    agentsRemoved.push(grant.agent_url)
    events.push({
      event_type: 'authorization.revoked',
      entity_type: 'authorization',
      entity_id: `${canonical}|${domain}`,
      payload: { agent_url: grant.agent_url, publisher_domain: domain },
    })
  }

  const publisher = next.snapshot.publisher
  const summary = {
    publisher_domain: domain,
    domain,
    properties_added: added,
    properties_removed: removed,
    agents_added: agentsAdded,
    agents_removed: agentsRemoved,
    agent_count: newGrants.size,
    property_count: after.size,
    ...(publisher.discovery_method ? { discovery_method: publisher.discovery_method } : {}),
    manager_domain: publisher.manager_domain ?? null,
    source: publisher.source,
  }
  const wasDeclared = previous.publisher?.source === 'adagents_json' && previous.publisher.valid === true
  const declares = publisher.source === 'adagents_json' && publisher.valid === true
  if (declares && !wasDeclared) {
    events.unshift({
      event_type: 'publisher.adagents_discovered',
      entity_type: 'publisher',
      entity_id: domain,
      payload: summary,
    })
  } else if (events.length > 0 || (wasDeclared && !declares)) {
    const changed = [
      ...(added || removed || events.some((event) => event.event_type === 'property.updated')
        ? ['properties']
        : []),
      ...(events.some((event) => event.entity_type === 'authorization') ? ['authorized_agents'] : []),
      ...(wasDeclared && !declares ? ['validity'] : []),
    ]
    events.unshift({
      event_type: 'publisher.adagents_changed',
      entity_type: 'publisher',
      entity_id: domain,
      payload: { ...summary, ...(changed.length > 0 ? { changed_fields: changed } : {}) },
    })
  }
  return events
}
