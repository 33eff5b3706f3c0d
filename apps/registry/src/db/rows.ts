/** Row shapes of the publisher tables and their conversion to records. */
import type { AuthorizationRecord, PropertyRecord, PublisherRecord } from '../domain/types.js'
import { compact, parseJson } from './json.js'

export interface PublisherRow {
  domain: string
  source: PublisherRecord['source']
  document: string | null
  url: string | null
  resolved_url: string | null
  status_code: number | null
  response_bytes: number | null
  discovery_method: PublisherRecord['discovery_method'] | null
  manager_domain: string | null
  valid: number | null
  contact: string | null
  last_validated: string | null
  created_at: string
  updated_at: string
}

export const PUBLISHER_COLUMNS =
  'domain, source, document, url, resolved_url, status_code, response_bytes, discovery_method, manager_domain, valid, contact, last_validated, created_at, updated_at'

export const toPublisher = (row: PublisherRow): PublisherRecord =>
  ({
    ...compact({
      ...row,
      document: parseJson<Record<string, unknown>>(row.document),
      contact: parseJson<PublisherRecord['contact']>(row.contact),
      status_code: row.status_code === null ? null : Number(row.status_code),
      response_bytes: row.response_bytes === null ? null : Number(row.response_bytes),
    }),
    valid: row.valid === null ? null : Number(row.valid) === 1,
  }) as PublisherRecord

export interface PropertyRow {
  publisher_domain: string
  property_id: string
  rid: string
  property_type: string
  name: string
  identifiers: string
  tags: string
  source: PropertyRecord['source']
}

export const PROPERTY_COLUMNS =
  'publisher_domain, property_id, rid, property_type, name, identifiers, tags, source'

export const toProperty = (row: PropertyRow): PropertyRecord => ({
  ...row,
  identifiers: JSON.parse(row.identifiers) as PropertyRecord['identifiers'],
  tags: JSON.parse(row.tags) as string[],
})

/** A property row read as a tuple (`SqlExecutor.tuples`), columns in {@link PROPERTY_COLUMNS} order. */
export type PropertyTuple = readonly [
  publisher_domain: string,
  property_id: string,
  rid: string,
  property_type: string,
  name: string,
  identifiers: string,
  tags: string,
  source: PropertyRecord['source'],
]

/**
 * The record of a property tuple (the large reads: a publisher's whole property list).
 *
 * @example
 * const records = (await db.tuples<PropertyTuple>(`SELECT ${PROPERTY_COLUMNS} FROM registry_properties`)).map(tupleToProperty)
 */
export const tupleToProperty = (tuple: PropertyTuple): PropertyRecord => ({
  publisher_domain: tuple[0],
  property_id: tuple[1],
  rid: tuple[2],
  property_type: tuple[3],
  name: tuple[4],
  identifiers: JSON.parse(tuple[5]) as PropertyRecord['identifiers'],
  tags: JSON.parse(tuple[6]) as string[],
  source: tuple[7],
})

export interface AuthorizationRow {
  id: string
  agent_url: string
  agent_url_canonical: string
  publisher_domain: string
  property_id: string
  authorized_for: string | null
  authorization_type: string | null
  evidence: 'adagents_json'
  signing_keys: string | null
  effective_from: string | null
  effective_until: string | null
  source_url: string | null
  created_at: string
  updated_at: string
}

export const AUTHORIZATION_COLUMNS =
  'id, agent_url, agent_url_canonical, publisher_domain, property_id, authorized_for, authorization_type, evidence, signing_keys, effective_from, effective_until, source_url, created_at, updated_at'

export const toAuthorization = (row: AuthorizationRow): AuthorizationRecord => ({
  ...row,
  property_id: row.property_id === '' ? null : row.property_id,
  signing_keys: parseJson<Record<string, unknown>[]>(row.signing_keys) ?? null,
})
