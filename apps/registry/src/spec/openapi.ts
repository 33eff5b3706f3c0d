/**
 * The registry's OpenAPI document: the vendored AdCP `registry.yaml`, served at `/openapi.json` with two
 * project decisions applied so that it describes this service exactly:
 *
 * 1. Every error response uses this project's error envelope `{ "error": { "code", "message" } }` (extra
 *    members such as `domain` allowed), instead of the upstream `{ "error": string }`.
 * 2. Operations with parameters also declare 400, those with a JSON body 413/415 as well, locked operations 401
 *    (upstream omits it on `setupMyBrand`); the authorization pulls declare the 403 of
 *    `include=raw` and the stream the 429 of too many streams (both documented upstream, adcp-notes §1.4.5).
 * 3. The bulk resolve results allow `null` (an unresolvable domain), which the upstream `allOf` forbids.
 * 4. `GET /api/brands/find` returns the flat `CompanySearchResult[]` the upstream handler returns
 *    (adcp-notes §8 #2), and the expand/authorization selectors accept the AdCP `selection_type` shape as well
 *    as the documented one (§8 #1).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { conformanceDir } from './locate.js'

export type JsonObject = Record<string, unknown>

export interface Operation {
  readonly method: string
  readonly path: string
  readonly operationId: string
  readonly tag: string
  readonly secured: boolean
  readonly raw: JsonObject
}

/** The official `Error` (`{ error: string }`) with the `code` every registry error carries beside it. */
export const ERROR_SCHEMA = {
  type: 'object',
  properties: {
    error: { type: 'string', description: 'What went wrong, for people.' },
    code: {
      type: 'string',
      description: 'What went wrong, for programs (`brand_not_found`, `invalid_selector`…).',
    },
  },
  required: ['error', 'code'],
}

const SELECTOR_SCHEMA = {
  type: 'object',
  description:
    'A publisher property selector. The AdCP shape (`selection_type` all | by_id | by_tag with `property_ids` / `property_tags`, one `publisher_domain` or the `publisher_domains` fan-out) and the documented shape (`property_ids`, `property_types`, `tags`) are both accepted. A selector without `publisher_domain` and `publisher_domains` addresses every publisher whose adagents.json authorizes the agent (`by_id` needs `publisher_domain`: property ids are publisher-scoped).',
  properties: {
    publisher_domain: { type: 'string' },
    publisher_domains: { type: 'array', items: { type: 'string' }, minItems: 1 },
    selection_type: { type: 'string', enum: ['all', 'by_id', 'by_tag'] },
    property_ids: { type: 'array', items: { type: 'string' } },
    property_tags: { type: 'array', items: { type: 'string' } },
    property_types: { type: 'array', items: { type: 'string' } },
    tags: { type: 'array', items: { type: 'string' } },
  },
}

let cached: JsonObject | undefined

/** The served document (parsed once). */
export function registryDocument(): JsonObject {
  if (cached) return cached
  const document = parse(
    readFileSync(join(conformanceDir(), 'openapi', 'registry.yaml'), 'utf8'),
  ) as JsonObject
  const components = document.components as { schemas: Record<string, unknown> }
  components.schemas.Error = ERROR_SCHEMA
  components.schemas.PublisherPropertySelector = SELECTOR_SCHEMA
  for (const operations of Object.values(document.paths as Record<string, Record<string, JsonObject>>)) {
    for (const operation of Object.values(operations)) {
      const responses = (operation.responses ?? {}) as Record<string, JsonObject>
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) >= 400 && response.content) {
          response.content = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } }
        }
      }
      const errorResponse = (description: string) => ({
        description,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      })
      if (operation.requestBody) {
        responses['413'] ??= errorResponse('The body is larger than the registry accepts.')
        responses['415'] ??= errorResponse('The body is not application/json.')
      }
      if (Array.isArray(operation.security) && operation.security.length > 0) {
        responses['401'] ??= errorResponse('Authentication required (a missing, invalid or expired bearer).')
      }
      if (operation.requestBody || (Array.isArray(operation.parameters) && operation.parameters.length > 0)) {
        responses['400'] ??= errorResponse('A parameter or the body is missing or malformed.')
      }
      if (
        operation.operationId === 'getAgentAuthorizations' ||
        operation.operationId === 'getAgentAuthorizationsSnapshot'
      ) {
        responses['403'] ??= errorResponse(
          '`include=raw` is for registry administrators (adcp-notes §1.4.5).',
        )
      }
      if (operation.operationId === 'streamRegistryFeed') {
        responses['429'] ??= errorResponse('Too many feed streams are open.')
      }
      if (
        operation.operationId === 'resolveBrandsBulk' ||
        operation.operationId === 'resolvePropertiesBulk'
      ) {
        // Upstream writes `allOf: [Resolved…, { type: [object, null] }]`, which no null can satisfy, while the
        // handler answers null for a domain it cannot resolve: the served document says `anyOf`.
        const schema = (responses['200'] as { content: Record<string, { schema: JsonObject }> }).content[
          'application/json'
        ]!.schema
        const results = (schema.properties as Record<string, JsonObject>).results!
        const item = results.additionalProperties as { allOf: JsonObject[] }
        results.additionalProperties = { anyOf: [item.allOf[0], { type: 'null' }] }
      }
      if (operation.operationId === 'findBrand') {
        const ok = responses['200'] as { content: Record<string, { schema: JsonObject }> }
        ok.content['application/json']!.schema = {
          type: 'object',
          properties: {
            results: { type: 'array', items: { $ref: '#/components/schemas/CompanySearchResult' } },
          },
          required: ['results'],
        }
      }
    }
  }
  document.info = {
    ...(document.info as JsonObject),
    description: `${String((document.info as JsonObject).description ?? '')}\n\nServed by adwire's registry: error responses use \`{ "error": { "code", "message" } }\`.`,
  }
  return (cached = document)
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete']

/** Every operation of the document. */
export function operations(document: JsonObject = registryDocument()): Operation[] {
  const list: Operation[] = []
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, JsonObject>>)) {
    for (const method of METHODS) {
      const raw = item[method]
      if (!raw) continue
      list.push({
        method,
        path,
        operationId: String(raw.operationId),
        tag: String((raw.tags as string[] | undefined)?.[0] ?? ''),
        secured: Array.isArray(raw.security) && raw.security.length > 0,
        raw,
      })
    }
  }
  return list
}

/** The operation with this id. */
export function operation(operationId: string): Operation {
  const found = operations().find((item) => item.operationId === operationId)
  if (!found) throw new Error(`no operation ${operationId} in the registry document`)
  return found
}
