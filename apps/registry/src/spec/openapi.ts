/**
 * The registry's OpenAPI document: the vendored AdCP `registry.yaml`, served at `/openapi.json` unchanged except
 * for these documented additions (README, "Decisions"), so that it describes this service exactly:
 *
 * 1. Error statuses the upstream omits where no listed one fits: 400 on operations with parameters or a body,
 *    413/415 on those with a JSON body, 401 on locked ones (and on open ones for an invalid bearer), the 403 of `include=raw` on the authorization pulls,
 *    429 on the feed stream (too many streams), 403 on `saveBrand`, `saveProperty` and `savePolicy` for a resource another organization owns — each answered with the official `Error`
 *    (`{ "error": code, "message" }`), never a replacement of a status the upstream lists.
 * 2. The bulk resolve results allow `null` (an unresolvable domain or policy), which the upstream `allOf`
 *    forbids, and `resolvePolicy` may answer `null` (a pinned version that does not match), as its
 *    description says and its schema does not.
 * 3. `GET /api/brands/find` returns the flat `CompanySearchResult[]` the upstream handler returns
 *    (adcp-notes §8 #2), and the expand/authorization selectors accept the AdCP `selection_type` shape as well
 *    as the documented one (§8 #1).
 * 4. The compliance runs (`runStoryboard`, `runStoryboardStep`, `compareStoryboard`) answer 202 with the run's
 *    id and state when the request says `Prefer: respond-async` (runs are jobs; the result is read later).
 * 5. `GET /api/search` is paginated: optional `types`, `limit` and `offset` parameters, and an `agents` list and a
 *    `has_more` object beside the documented `brands`, `publishers` and `properties` (all optional additions).
 */
import { readFileSync } from 'node:fs'
import { registryOpenApiFile } from '@adwire/adcp-data'
import { parse } from 'yaml'

export type JsonObject = Record<string, unknown>

export interface Operation {
  readonly method: string
  readonly path: string
  readonly operationId: string
  readonly tag: string
  readonly secured: boolean
  readonly raw: JsonObject
}

/**
 * The success schemas this service replaces (additions 2, 3 and 4 above): a contract check against the upstream
 * document skips exactly these.
 */
export const REPLACED_SCHEMAS: ReadonlySet<string> = new Set([
  'findBrand 200',
  'resolveBrandsBulk 200',
  'resolvePropertiesBulk 200',
  'resolvePoliciesBulk 200',
  'resolvePolicy 200',
  'search 200',
])

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

/** The upstream document as vendored, parsed (a fresh copy on each call). */
export function upstreamDocument(): JsonObject {
  return parse(readFileSync(registryOpenApiFile, 'utf8')) as JsonObject
}

/** The compliance runs that answer 202 with `Prefer: respond-async` (addition 4). */
const ASYNC_RUNS = new Set(['runStoryboard', 'runStoryboardStep', 'compareStoryboard'])

/** The body of an accepted asynchronous run. */
const RUN_ACCEPTED_SCHEMA = {
  type: 'object',
  properties: {
    run_id: { type: 'string', format: 'uuid' },
    state: { type: 'string', enum: ['queued', 'running', 'completed', 'failed'] },
    agent_url: { type: 'string' },
    storyboard_ids: { type: 'array', items: { type: 'string' } },
    history_url: { type: 'string' },
  },
  required: ['run_id', 'state', 'agent_url', 'storyboard_ids'],
}

/** Statuses this service adds to an operation (addition 1), per operationId. */
export function addedStatuses(operation: JsonObject): Record<string, string> {
  const responses = (operation.responses ?? {}) as Record<string, JsonObject>
  const added: Record<string, string> = {}
  const add = (status: string, description: string) => {
    if (!responses[status]) added[status] = description
  }
  if (operation.requestBody) {
    add('413', 'The body is larger than the registry accepts.')
    add('415', 'The body is not application/json.')
  }
  if (Array.isArray(operation.security) && operation.security.length > 0) {
    add('401', 'Authentication required (a missing, invalid or expired bearer).')
  } else {
    add(
      '401',
      'An invalid or expired bearer (never served as an anonymous call; send no Authorization instead).',
    )
  }
  if (operation.requestBody || (Array.isArray(operation.parameters) && operation.parameters.length > 0)) {
    add('400', 'A parameter or the body is missing or malformed.')
  }
  if (
    operation.operationId === 'getAgentAuthorizations' ||
    operation.operationId === 'getAgentAuthorizationsSnapshot'
  ) {
    add('403', '`include=raw` is for registry administrators (adcp-notes §1.4.5).')
  }
  if (operation.operationId === 'streamRegistryFeed') add('429', 'Too many feed streams are open.')
  if (ASYNC_RUNS.has(String(operation.operationId))) {
    add(
      '202',
      'With `Prefer: respond-async`: the run is accepted and runs as a job; its id and state now, its result later in the compliance history and diagnostics.',
    )
  }
  if (operation.operationId === 'discoverAgent') {
    add('502', 'The agent answered, but not as an MCP or A2A agent (as the other probing operations say).')
  }
  if (operation.operationId === 'saveProperty' || operation.operationId === 'savePolicy') {
    add('403', 'The property or policy belongs to another organization (auth/authorize.ts).')
  }
  if (operation.operationId === 'saveBrand') {
    add(
      '403',
      'The brand was saved by, or is hosted for, another organization (409 is for authoritative brands).',
    )
  }
  return added
}

let cached: JsonObject | undefined

/** The served document (parsed once). */
export function registryDocument(): JsonObject {
  if (cached) return cached
  const document = upstreamDocument()
  const components = document.components as { schemas: Record<string, unknown> }
  components.schemas.PublisherPropertySelector = SELECTOR_SCHEMA
  for (const operations of Object.values(document.paths as Record<string, Record<string, JsonObject>>)) {
    for (const operation of Object.values(operations)) {
      const responses = (operation.responses ??= {}) as Record<string, JsonObject>
      for (const [status, description] of Object.entries(addedStatuses(operation))) {
        responses[status] = {
          description: `${description} (added by this service)`,
          content: {
            'application/json': {
              schema: status === '202' ? RUN_ACCEPTED_SCHEMA : { $ref: '#/components/schemas/Error' },
            },
          },
        }
      }
      if (
        operation.operationId === 'resolveBrandsBulk' ||
        operation.operationId === 'resolvePropertiesBulk' ||
        operation.operationId === 'resolvePoliciesBulk'
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
      if (operation.operationId === 'resolvePolicy') {
        // "Returns null if the version does not match": the served 200 allows the null it describes.
        const ok = responses['200'] as { content: Record<string, { schema: JsonObject }> }
        const policy = ok.content['application/json']!.schema
        ok.content['application/json']!.schema = { anyOf: [policy, { type: 'null' }] }
      }
      if (operation.operationId === 'search') addSearchPagination(operation)
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
    description: `${String((document.info as JsonObject).description ?? '')}\n\nServed by adwire's registry: every error is the \`Error\` schema, \`{ "error": code, "message": text }\`; statuses marked "added by this service" are its documented additions.`,
  }
  return (cached = document)
}

/** Addition 5: the pagination parameters and the extra members of `GET /api/search`. */
function addSearchPagination(operation: JsonObject): void {
  const parameters = (operation.parameters ??= []) as JsonObject[]
  parameters.push(
    {
      name: 'types',
      in: 'query',
      required: false,
      description:
        'Comma-separated categories to search (brands, publishers, properties, agents); default all. Added by this service.',
      schema: { type: 'string', example: 'brands,publishers' },
    },
    {
      name: 'limit',
      in: 'query',
      required: false,
      description: 'Results per category (default 5, max 50). Added by this service.',
      schema: { type: 'integer', minimum: 1, maximum: 50, default: 5 },
    },
    {
      name: 'offset',
      in: 'query',
      required: false,
      description: 'Results to skip in each category, in relevance order (max 10000). Added by this service.',
      schema: { type: 'integer', minimum: 0, maximum: 10000, default: 0 },
    },
  )
  const ok = (operation.responses as Record<string, JsonObject>)['200'] as {
    content: Record<string, { schema: JsonObject }>
  }
  const schema = ok.content['application/json']!.schema
  const properties = schema.properties as Record<string, JsonObject>
  properties.agents = {
    type: 'array',
    items: {},
    description: 'Matching agents (added by this service).',
  }
  properties.has_more = {
    type: 'object',
    additionalProperties: { type: 'boolean' },
    description: 'Per category, whether another page follows (added by this service).',
  }
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
