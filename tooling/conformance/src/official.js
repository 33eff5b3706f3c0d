// Test helper shared by every project that checks values against the official AdCP 3.1.19 JSON Schemas: Ajv
// (draft-07, ajv-formats) over every vendored schema, looked up by its $id, compiled once per schema file.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { Ajv } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { conformancePath, listConformanceFiles } from './index.js'

/** @type {(ajv: Ajv) => Ajv} */
const addFormats = /** @type {any} */ (addFormatsModule)
const ID_PREFIX = '/schemas/3.1.19/'

/** @type {Ajv | undefined} */
let ajv
function validator() {
  if (ajv) return ajv
  ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false })
  addFormats(ajv)
  for (const format of ['uri-template', 'YYYYMMDD']) ajv.addFormat(format, true)
  const root = conformancePath('schemas/3.1.19')
  for (const file of listConformanceFiles('schemas/3.1.19', (name) => name.endsWith('.json'))) {
    const schema = JSON.parse(readFileSync(path.join(root, file), 'utf8'))
    if (schema?.$id === `${ID_PREFIX}${file}`) ajv.addSchema(schema)
  }
  return ajv
}

/** @type {Map<string, import('ajv').ValidateFunction>} */
const compiled = new Map()

/**
 * The official verdict on `value` for the schema file (e.g. `core/format.json`): the error list, empty when valid.
 * @param {string} file
 * @param {unknown} value
 * @returns {string[]}
 */
export function officialErrors(file, value) {
  let validate = compiled.get(file)
  if (!validate) {
    validate = validator().getSchema(`${ID_PREFIX}${file}`)
    if (!validate) throw new Error(`no vendored schema ${file}`)
    compiled.set(file, validate)
  }
  if (validate(JSON.parse(JSON.stringify(value)))) return []
  return (validate.errors ?? []).map((error) => `${error.instancePath || '(root)'} ${error.message ?? ''}`)
}
