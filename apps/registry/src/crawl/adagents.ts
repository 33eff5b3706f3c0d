/**
 * Reading an adagents.json: schema validation against the official AdCP 3.1.19 schema, the checks the schema
 * cannot express, and the facts it declares (properties and per-property authorizations).
 */
import { adagentsSchemaErrors } from '../spec/adagents-schema.js'
import { normalizeDomain } from '../domain/names.js'
import type { Identifier, PublisherSnapshot } from '../domain/types.js'

export interface Issue {
  readonly field: string
  readonly message: string
  readonly severity: 'error'
}
export interface Warning {
  readonly field: string
  readonly message: string
  readonly suggestion?: string
}

type JsonObject = Record<string, unknown>
const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []

/**
 * Schema and semantic problems of a parsed document. `allowHttp` (local crawling only) accepts `http:` URLs
 * where the schema asks for `https:`.
 */
export function checkAdagents(
  document: unknown,
  options: { allowHttp?: boolean } = {},
): { errors: Issue[]; warnings: Warning[] } {
  const errors: Issue[] = []
  const warnings: Warning[] = []
  if (!isObject(document))
    return {
      errors: [{ field: '', message: 'adagents.json must be a JSON object', severity: 'error' }],
      warnings,
    }
  const schemaErrors = adagentsSchemaErrors(options.allowHttp ? asHttps(document) : document)
  // oneOf failures list every branch; report the branch the document was trying to be.
  const variant =
    'authoritative_location' in document && !('authorized_agents' in document) ? '/oneOf/0' : '/oneOf/1'
  const relevant = schemaErrors.filter(
    (error) => error.schemaPath.startsWith(`#${variant}`) || !error.schemaPath.startsWith('#/oneOf/'),
  )
  const seen = new Set<string>()
  for (const error of relevant.length > 0 ? relevant : schemaErrors) {
    const field = error.instancePath.replace(/^\//, '').replaceAll('/', '.') || '(root)'
    const message = `${error.message ?? 'is invalid'}${error.params && 'allowedValues' in error.params ? `: ${(error.params.allowedValues as unknown[]).join(', ')}` : ''}`
    const key = `${field}|${message}`
    if (seen.has(key) || error.keyword === 'oneOf') continue
    seen.add(key)
    errors.push({ field, message, severity: 'error' })
  }
  if (errors.length === 0 && schemaErrors.length > 0)
    errors.push({ field: '(root)', message: 'does not match the adagents.json schema', severity: 'error' })

  const properties = Array.isArray(document.properties) ? document.properties.filter(isObject) : []
  const ids = new Set<string>()
  properties.forEach((property, index) => {
    const id = property.property_id
    if (typeof id === 'string') {
      if (ids.has(id))
        errors.push({
          field: `properties.${index}.property_id`,
          message: `duplicate property_id "${id}"`,
          severity: 'error',
        })
      ids.add(id)
    }
  })
  const agents = Array.isArray(document.authorized_agents) ? document.authorized_agents.filter(isObject) : []
  agents.forEach((agent, index) => {
    for (const id of strings(agent.property_ids))
      if (!ids.has(id))
        errors.push({
          field: `authorized_agents.${index}.property_ids`,
          message: `unknown property_id "${id}"`,
          severity: 'error',
        })
    if (typeof agent.url === 'string' && agent.url.startsWith('http:'))
      warnings.push({
        field: `authorized_agents.${index}.url`,
        message: 'agent URL is not https',
        suggestion: 'serve the agent over https',
      })
  })
  if (agents.length === 0 && !('authoritative_location' in document))
    warnings.push({ field: 'authorized_agents', message: 'no authorized agents declared' })
  if (!('last_updated' in document) && !('authoritative_location' in document))
    warnings.push({
      field: 'last_updated',
      message: 'last_updated is missing',
      suggestion: 'add an ISO 8601 last_updated timestamp',
    })
  return { errors, warnings }
}

/** The document with every `http://` string read as `https://` (schema check of a local crawl). */
function asHttps(value: unknown): unknown {
  if (typeof value === 'string') return value.startsWith('http://') ? `https://${value.slice(7)}` : value
  if (Array.isArray(value)) return value.map(asHttps)
  if (isObject(value))
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, asHttps(item)]))
  return value
}

function identifiersOf(value: unknown): Identifier[] {
  if (!Array.isArray(value)) return []
  return value
    .filter(isObject)
    .flatMap((item) =>
      typeof item.type === 'string' && typeof item.value === 'string'
        ? [{ type: item.type, value: item.value }]
        : [],
    )
}

/**
 * The properties and authorizations a (valid) document declares for `domain`. `publisher_properties`
 * selectors are honoured for this publisher's own properties; selectors naming other publishers grant nothing
 * here (those publishers' own files decide). Signal authorizations are not property authorizations.
 */
export function factsOf(
  document: JsonObject,
  domain: string,
  sourceUrl: string,
): Pick<PublisherSnapshot, 'properties' | 'authorizations'> {
  const properties = (Array.isArray(document.properties) ? document.properties.filter(isObject) : []).map(
    (property, index) => ({
      publisher_domain: domain,
      property_id: typeof property.property_id === 'string' ? property.property_id : `property-${index + 1}`,
      property_type: typeof property.property_type === 'string' ? property.property_type : 'unknown',
      name: typeof property.name === 'string' ? property.name : '',
      identifiers: identifiersOf(property.identifiers),
      tags: strings(property.tags),
      source: 'adagents_json' as const,
    }),
  )
  const byId = new Map(properties.map((property) => [property.property_id, property]))
  const authorizations: PublisherSnapshot['authorizations'][number][] = []
  const agents = Array.isArray(document.authorized_agents) ? document.authorized_agents.filter(isObject) : []
  for (const agent of agents) {
    if (typeof agent.url !== 'string') continue
    const type = typeof agent.authorization_type === 'string' ? agent.authorization_type : null
    const base = {
      agent_url: agent.url,
      publisher_domain: domain,
      authorized_for: typeof agent.authorized_for === 'string' ? agent.authorized_for : null,
      authorization_type: type,
      evidence: 'adagents_json' as const,
      signing_keys: Array.isArray(agent.signing_keys) ? agent.signing_keys.filter(isObject) : null,
      effective_from: typeof agent.effective_from === 'string' ? agent.effective_from : null,
      effective_until: typeof agent.effective_until === 'string' ? agent.effective_until : null,
      source_url: sourceUrl,
    }
    const grant = (propertyId: string | null) => authorizations.push({ ...base, property_id: propertyId })
    const byTags = (tags: string[]) => {
      for (const property of properties)
        if (property.tags.some((tag) => tags.includes(tag))) grant(property.property_id)
    }
    switch (type) {
      case 'property_ids':
        for (const id of strings(agent.property_ids)) if (byId.has(id)) grant(id)
        break
      case 'property_tags':
        byTags(strings(agent.property_tags))
        break
      case 'inline_properties':
        for (const inline of Array.isArray(agent.properties) ? agent.properties.filter(isObject) : []) {
          const id = typeof inline.property_id === 'string' ? inline.property_id : undefined
          if (id && !byId.has(id)) {
            const property = {
              publisher_domain: domain,
              property_id: id,
              property_type: String(inline.property_type ?? 'unknown'),
              name: String(inline.name ?? ''),
              identifiers: identifiersOf(inline.identifiers),
              tags: strings(inline.tags),
              source: 'adagents_json' as const,
            }
            properties.push(property)
            byId.set(id, property)
          }
          if (id) grant(id)
        }
        break
      case 'publisher_properties':
        for (const selector of Array.isArray(agent.publisher_properties)
          ? agent.publisher_properties.filter(isObject)
          : []) {
          const domains = [selector.publisher_domain, ...strings(selector.publisher_domains)].map(
            normalizeDomain,
          )
          if (!domains.includes(domain)) continue
          if (selector.selection_type === 'all') {
            grant(null)
          } else if (selector.selection_type === 'by_id') {
            for (const id of strings(selector.property_ids)) if (byId.has(id)) grant(id)
          } else if (selector.selection_type === 'by_tag') {
            byTags(strings(selector.property_tags))
          }
        }
        break
      case null:
        grant(null)
        break
      default:
        break
    }
  }
  return { properties, authorizations }
}
