/**
 * What an MCP tool declares (mcp-guide.mdx): `inputSchema` = the task's full official request schema (3.1.19,
 * the zod schemas of `@adwire/schemas` converted with zod's own `z.toJSONSchema`), so a client that filters
 * arguments by the declared schema never drops a spec field; `outputSchema` = the official response schema or
 * the failed-task body; annotations that say what the task does.
 */
import * as schemas from '@adwire/schemas'
import { z } from 'zod'
import type { AnyTask, ToolAnnotations } from './types.js'

type Json = Record<string, unknown>

const ENVELOPE_PROPERTIES: Json = {
  idempotency_key: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{16,255}$' },
  context: { type: 'object', description: 'Echoed unchanged in the response and in webhooks' },
  context_id: { type: 'string' },
  push_notification_config: {
    type: 'object',
    description: 'Where status changes of an async task are pushed',
  },
  governance_context: {},
  adcp_version: { type: 'string', description: 'Release-precision AdCP version the buyer pins, e.g. "3.1"' },
  adcp_major_version: { type: 'integer' },
}

/** The `core/error.json` object and the failed-task body every transport sends on failure. */
const ERROR_JSON: Json = {
  type: 'object',
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
    field: { type: 'string' },
    suggestion: { type: 'string' },
    retry_after: { type: 'number' },
    details: { type: 'object' },
    recovery: { type: 'string', enum: ['transient', 'correctable', 'terminal'] },
  },
  required: ['code', 'message'],
}
const FAILED_BODY_JSON: Json = {
  type: 'object',
  properties: {
    status: { const: 'failed' },
    errors: { type: 'array', items: ERROR_JSON, minItems: 1 },
    adcp_error: ERROR_JSON,
    context: { type: 'object' },
    adcp_version: { type: 'string' },
  },
  required: ['status', 'errors', 'adcp_error'],
}

const pascal = (name: string) =>
  name
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('')

/**
 * `protocol/get-adcp-capabilities-request.json` (3.1.19), which `@adwire/schemas` does not generate: the
 * version envelope, `protocols`, `context` and `ext`, open to other members.
 */
const GetAdcpCapabilitiesRequest = z.looseObject({
  adcp_version: z.string().optional(),
  adcp_major_version: z.number().int().optional(),
  protocols: z
    .array(z.enum(['media_buy', 'signals', 'governance', 'sponsored_intelligence', 'creative']))
    .min(1)
    .optional(),
  context: z.looseObject({}).optional(),
  ext: z.looseObject({}).optional(),
})

/** The official zod schema `@adwire/schemas` exports for a task's request or response, if any. */
export function officialSchema(task: string, kind: 'Request' | 'Response'): z.ZodType | undefined {
  const found = (schemas as Record<string, unknown>)[`${pascal(task)}${kind}Schema`]
  if (found instanceof z.ZodType) return found
  return task === 'get_adcp_capabilities' && kind === 'Request' ? GetAdcpCapabilitiesRequest : undefined
}

/** zod → JSON Schema (draft-07, what MCP clients' Ajv reads), or undefined when zod cannot convert it. */
function toJson(schema: z.ZodType, io: 'input' | 'output'): Json | undefined {
  try {
    const json = z.toJSONSchema(schema, {
      io,
      unrepresentable: 'any',
      target: 'draft-07',
      reused: 'ref',
    }) as Json
    delete json.$schema
    return json
  } catch {
    return undefined
  }
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * MCP requires `type: "object"` at the root, and clients read the root `properties`: the object members of a
 * root `allOf` (the version envelope and the task's own fields) are hoisted there; the constraint members
 * (`if`/`then`, `not`, ...) stay in `allOf`. A closed member keeps its place too, its properties also listed.
 */
export function hoistObject(json: Json): Json {
  const properties: Json = { ...(isObject(json.properties) ? json.properties : {}) }
  const required = new Set<string>(Array.isArray(json.required) ? (json.required as string[]) : [])
  const rest: unknown[] = []
  const definitions = isObject(json.definitions) ? json.definitions : {}
  for (const listed of Array.isArray(json.allOf) ? json.allOf : []) {
    // A member shared with other schemas is a `#/definitions/…` reference: hoisted from its definition.
    const ref = isObject(listed) && typeof listed.$ref === 'string' ? listed.$ref : undefined
    const target = ref?.startsWith('#/definitions/')
      ? definitions[ref.slice('#/definitions/'.length)]
      : undefined
    const member = isObject(target) && Object.keys(listed as Json).length === 1 ? target : listed
    const plain =
      isObject(member) &&
      isObject(member.properties) &&
      !['if', 'then', 'else', 'not', 'anyOf', 'oneOf', 'allOf', '$ref'].some((key) => key in member)
    if (!plain) {
      // `{}` (a constraint zod checks in code, e.g. a `not`) says nothing to a client.
      if (!isObject(listed) || Object.keys(listed).length > 0) rest.push(listed)
      continue
    }
    Object.assign(properties, member.properties)
    for (const name of Array.isArray(member.required) ? (member.required as string[]) : []) required.add(name)
    if (member.additionalProperties === false) rest.push(listed)
  }
  const { allOf: _allOf, ...root } = json
  return {
    ...root,
    type: 'object',
    properties,
    ...(required.size ? { required: [...required] } : {}),
    ...(rest.length ? { allOf: rest } : {}),
  }
}

/** The tool's `inputSchema`: the official request schema (else the task's `input`) plus the envelope fields. */
export function toolInputSchema(task: AnyTask): Json {
  const source = task.requestSchema ?? officialSchema(task.name, 'Request') ?? task.input
  const json = hoistObject(
    task.requestJsonSchema ? { ...task.requestJsonSchema } : (toJson(source, 'input') ?? { type: 'object' }),
  )
  const properties = { ...ENVELOPE_PROPERTIES, ...(json.properties as Json) }
  const required = new Set((json.required as string[] | undefined) ?? [])
  if (task.idempotent) required.add('idempotency_key')
  return { ...json, properties, ...(required.size ? { required: [...required] } : {}) }
}

/** What the server adds to every successful response (version envelope, echoed context, replay flag). */
const RESPONSE_ENVELOPE_PROPERTIES: Json = {
  adcp_version: { type: 'string' },
  context: { type: 'object' },
  replayed: { type: 'boolean' },
}

/**
 * The tool's `outputSchema`: the official response schema (else the task's `output`) or the failed-task
 * body — MCP clients validate `structuredContent` against it, error results included. The success branch
 * lists the members the server adds to every response, so that a closed `output` (a zod object) still
 * accepts them.
 */
export function toolOutputSchema(task: AnyTask): Json {
  const source = task.responseSchema ?? officialSchema(task.name, 'Response') ?? task.output
  // Shared subschemas stay at the root, where their `#/definitions/…` references point.
  const { definitions, ...json } = toJson(source, 'output') ?? { type: 'object' }
  const success = isObject(json.properties)
    ? { ...json, properties: { ...RESPONSE_ENVELOPE_PROPERTIES, ...json.properties } }
    : json
  return {
    type: 'object',
    ...(definitions ? { definitions } : {}),
    anyOf: [success, FAILED_BODY_JSON],
  }
}

/**
 * Annotations that tell the truth: public and read tasks are read-only; a task that writes is not, is
 * idempotent when it replays by `idempotency_key`, and destructive only when it deletes. A task's own
 * `annotations` win.
 */
export function toolAnnotations(task: AnyTask): ToolAnnotations {
  const reads = task.access === 'public' || task.access.permission === 'read'
  const deletes = task.access !== 'public' && task.access.permission === 'delete'
  return {
    readOnlyHint: reads,
    destructiveHint: deletes,
    idempotentHint: reads || task.idempotent,
    ...task.annotations,
  }
}
