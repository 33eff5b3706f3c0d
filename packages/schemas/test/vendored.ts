/** Loads the vendored AdCP data the schema tests compare against. */
import { Ajv, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { conformancePath, listConformanceFiles } from '@adwire/conformance'

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

export const SCHEMA_ROOT = conformancePath('schemas/3.1.19')
export const ID_PREFIX = '/schemas/3.1.19/'

let ajv: Ajv | undefined
/** Ajv (draft-07) with every 3.1.19 schema loaded: the reference verdict for every example. */
export function referenceValidator(): Ajv {
  if (ajv) return ajv
  ajv = new Ajv({ strict: false, allErrors: false, validateSchema: false })
  addFormats(ajv)
  for (const format of ['uri-template', 'YYYYMMDD']) ajv.addFormat(format, true)
  for (const file of listConformanceFiles('schemas/3.1.19', (name) => name.endsWith('.json'))) {
    const schema = JSON.parse(readFileSync(path.join(SCHEMA_ROOT, file), 'utf8'))
    // Some copies (core/async-response-refs/) repeat another file's $id; the file at the $id's path is the original.
    if (schema?.$id === `${ID_PREFIX}${file}`) ajv.addSchema(schema)
  }
  return ajv
}

const compiled = new Map<string, ValidateFunction>()
/** The Ajv validator of `file#pointer` (pointer '' for the whole file). */
export function referenceValidate(key: string): ValidateFunction {
  let validate = compiled.get(key)
  if (!validate) {
    const [file, pointer = ''] = key.split('#')
    const id = `${ID_PREFIX}${file}${pointer ? `#${pointer}` : ''}`
    validate = referenceValidator().getSchema(id) ?? referenceValidator().compile({ $ref: id })
    compiled.set(key, validate)
  }
  return validate
}
