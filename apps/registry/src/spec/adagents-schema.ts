/**
 * The official AdCP 3.1.19 JSON Schemas of `adagents.json` and `brand.json` (draft-07), loaded with every
 * schema they reference, compiled once.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ADCP_VERSION as VERSION, schemasDir } from '@adwire/adcp-data'
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as typeof addFormatsModule

let ajv: Ajv | undefined
const validators = new Map<string, ValidateFunction>()

function load(ajvInstance: Ajv, id: string, seen: Set<string>): void {
  if (seen.has(id)) return
  seen.add(id)
  const file = join(schemasDir, id.replace(`/schemas/${VERSION}/`, ''))
  const text = readFileSync(file, 'utf8')
  ajvInstance.addSchema(JSON.parse(text) as object)
  for (const match of text.matchAll(/"\$ref"\s*:\s*"(\/schemas\/[^"#]+)/g)) load(ajvInstance, match[1]!, seen)
}

function validatorFor(name: 'adagents.json' | 'brand.json'): ValidateFunction {
  let validator = validators.get(name)
  if (validator) return validator
  if (!ajv) {
    ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false })
    addFormats(ajv)
  }
  const id = `/schemas/${VERSION}/${name}`
  load(ajv, id, new Set(Object.keys((ajv as unknown as { schemas: object }).schemas)))
  validator = ajv.getSchema(id)!
  validators.set(name, validator)
  return validator
}

/** Schema errors of a parsed adagents.json (empty when it conforms). */
export function adagentsSchemaErrors(document: unknown): ErrorObject[] {
  const validate = validatorFor('adagents.json')
  return validate(document) ? [] : [...(validate.errors ?? [])]
}

/** Schema errors of a parsed brand.json (empty when it conforms). */
export function brandSchemaErrors(document: unknown): ErrorObject[] {
  const validate = validatorFor('brand.json')
  return validate(document) ? [] : [...(validate.errors ?? [])]
}
