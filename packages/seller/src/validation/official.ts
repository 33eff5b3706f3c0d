/**
 * Requests are checked against the official 3.1.19 JSON Schemas (the files of @adwire/adcp-data, with Ajv)
 * before a task runs: a request the schema refuses is INVALID_REQUEST naming the first offending field, never a
 * 500.
 */
import { listSchemaFiles, readSchema } from '@adwire/adcp-data'
import { AgentError } from '@adwire/agent-server'
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv
const ID_PREFIX = '/schemas/3.1.19/'

let ajv: Ajv | undefined
function validator(): Ajv {
  if (ajv) return ajv
  ajv = new Ajv({ strict: false, allErrors: false, validateSchema: false })
  addFormats(ajv)
  for (const format of ['uri-template', 'YYYYMMDD']) ajv.addFormat(format, true)
  for (const file of listSchemaFiles()) {
    const schema = readSchema(file)
    if (schema.$id === `${ID_PREFIX}${file}`) ajv.addSchema(schema)
  }
  return ajv
}

const compiled = new Map<string, ValidateFunction>()

/** The compiled validator of an official schema file (e.g. `media-buy/create-media-buy-request.json`). */
export function officialValidator(file: string): ValidateFunction {
  let validate = compiled.get(file)
  if (!validate) {
    validate = validator().getSchema(`${ID_PREFIX}${file}`)
    if (!validate) throw new Error(`no vendored schema ${file}`)
    compiled.set(file, validate)
  }
  return validate
}

/**
 * The MCP tool `inputSchema` of an official request schema file: an object schema whose root `properties` are
 * the file's, each as the file gives it unless it points at other files (`$ref`), then its `type` and
 * `description` only (the server's Ajv check above is the real validation), with the file's `required`.
 * Clients that strip undeclared arguments (the official AdCP client does) keep every field of the request.
 *
 * @example officialToolSchema('media-buy/get-products-request.json').properties.buying_mode // { type: 'string', enum: [...] }
 */
export function officialToolSchema(file: string): Record<string, unknown> {
  const schema = readSchema(file) as {
    description?: string
    properties?: Record<string, Record<string, unknown>>
    required?: string[]
  }
  const properties: Record<string, unknown> = {}
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (!JSON.stringify(property).includes('"$ref"')) {
      properties[name] = property
      continue
    }
    const { type, description } = property
    properties[name] = {
      ...(type !== undefined ? { type } : {}),
      ...(description !== undefined ? { description } : {}),
    }
  }
  return {
    type: 'object',
    ...(schema.description ? { description: schema.description } : {}),
    properties,
    ...(schema.required?.length ? { required: schema.required } : {}),
  }
}

const fieldOf = (error: ErrorObject): string => {
  const base = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
    .join('')
    .replace(/^\./, '')
  const missing = error.keyword === 'required' ? String(error.params.missingProperty ?? '') : ''
  return [base, missing].filter(Boolean).join('.') || '(root)'
}

/** Throws INVALID_REQUEST when `value` does not satisfy the official schema `file`. */
export function assertOfficial(file: string, value: unknown): void {
  const validate = officialValidator(file)
  if (validate(value)) return
  const error = validate.errors![0]!
  const field = fieldOf(error)
  throw new AgentError('INVALID_REQUEST', `${field} ${error.message ?? 'is invalid'} (${file})`, {
    field,
    status: 400,
  })
}

/**
 * The first problem `value` has against the official schema `file`, as `field` and message; undefined when valid.
 *
 * @example
 * officialProblem('compliance/comply-test-controller-request.json', request)?.field // 'params.creative_id'
 */
export function officialProblem(
  file: string,
  value: unknown,
): { field: string; message: string } | undefined {
  const validate = officialValidator(file)
  if (validate(value)) return undefined
  const error = validate.errors![0]!
  const field = fieldOf(error)
  return { field, message: `${field} ${error.message ?? 'is invalid'}` }
}
