/** Test helper: Ajv (draft-07, ajv-formats) over every vendored AdCP 3.1.19 schema, looked up by $id. */
import { Ajv, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { conformancePath, listConformanceFiles } from '@adwire/conformance'

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv
const ID_PREFIX = '/schemas/3.1.19/'

let ajv: Ajv | undefined
function validator(): Ajv {
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

const compiled = new Map<string, ValidateFunction>()
/** The official verdict on `value` for the schema file (e.g. `core/format.json`): the error list, empty when valid. */
export function officialErrors(file: string, value: unknown): string[] {
  let validate = compiled.get(file)
  if (!validate) {
    validate = validator().getSchema(`${ID_PREFIX}${file}`)
    if (!validate) throw new Error(`no vendored schema ${file}`)
    compiled.set(file, validate)
  }
  if (validate(JSON.parse(JSON.stringify(value)))) return []
  return (validate.errors ?? []).map((error) => `${error.instancePath || '(root)'} ${error.message ?? ''}`)
}
