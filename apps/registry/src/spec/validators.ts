/**
 * Request and response validation against the served OpenAPI document: one Ajv (JSON Schema 2020-12, as
 * OpenAPI 3.1 uses) holding the whole document, and a validator per operation, compiled on first use.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { operation, registryDocument, type JsonObject } from './openapi.js'

const DOCUMENT_ID = 'https://adwire.invalid/registry.json'

// ajv-formats is CommonJS; its default export arrives wrapped under some loaders.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as typeof addFormatsModule

let ajv: Ajv2020 | undefined
const compiled = new Map<string, ValidateFunction | null>()

function instance(): Ajv2020 {
  if (ajv) return ajv
  ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, validateFormats: true })
  addFormats(ajv)
  ajv.addSchema({ ...registryDocument(), $id: DOCUMENT_ID })
  return ajv
}

const pointer = (...segments: string[]) =>
  segments.map((segment) => segment.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')

function validatorAt(key: string, segments: string[] | undefined): ValidateFunction | null {
  if (compiled.has(key)) return compiled.get(key)!
  const validator = segments ? instance().compile({ $ref: `${DOCUMENT_ID}#/${pointer(...segments)}` }) : null
  compiled.set(key, validator)
  return validator
}

/** A readable one-line summary of Ajv errors. */
export function describeErrors(errors: readonly ErrorObject[] | null | undefined, root = 'body'): string {
  return (errors ?? [])
    .slice(0, 5)
    .map((error) => `${root}${error.instancePath.replaceAll('/', '.')} ${error.message ?? 'is invalid'}`)
    .join('; ')
}

/** The result of a check: `undefined` when valid, otherwise a message. */
export type Problem = string | undefined

/** Checks a JSON request body of `operationId` against its request schema. */
export function checkRequestBody(operationId: string, body: unknown): Problem {
  const op = operation(operationId)
  const hasBody = Boolean(
    ((op.raw.requestBody as JsonObject | undefined)?.content as JsonObject | undefined)?.['application/json'],
  )
  const validator = validatorAt(
    `request:${operationId}`,
    hasBody
      ? ['paths', op.path, op.method, 'requestBody', 'content', 'application/json', 'schema']
      : undefined,
  )
  if (!validator || validator(body)) return undefined
  return describeErrors(validator.errors)
}

/**
 * Checks a JSON response of `operationId` with `status` against the document; a status the operation does
 * not declare is a problem too.
 */
export function checkResponse(operationId: string, status: number, body: unknown): Problem {
  const op = operation(operationId)
  const responses = (op.raw.responses ?? {}) as Record<string, JsonObject>
  const declared = responses[String(status)]
  if (!declared) return `status ${status} is not declared for ${operationId}`
  const content = declared.content as Record<string, unknown> | undefined
  if (!content)
    return body === undefined || body === '' ? undefined : `status ${status} of ${operationId} has no body`
  if (!content['application/json']) return undefined
  const validator = validatorAt(`response:${operationId}:${status}`, [
    'paths',
    op.path,
    op.method,
    'responses',
    String(status),
    'content',
    'application/json',
    'schema',
  ])!
  if (validator(body)) return undefined
  return `${operationId} ${status}: ${describeErrors(validator.errors)}`
}
