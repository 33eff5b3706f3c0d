/**
 * Response and request validation with Ajv (draft-07, ajv-formats) against the official AdCP JSON Schemas of
 * the version the bundle names (`schemas/<version>/`), each looked up by its `$id`.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { StoryboardError } from './errors.js'

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

/** Validates values against the schemas of one AdCP version. */
export interface SchemaValidator {
  readonly version: string
  /** The error list for `value` against the schema file (`core/format.json`); empty when valid. */
  errors(file: string, value: unknown): string[]
  has(file: string): boolean
  /** The top-level `required` fields of the schema file (empty when it names none). */
  required(file: string): readonly string[]
}

function jsonFiles(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return jsonFiles(full, base)
    return entry.name.endsWith('.json') ? [path.relative(base, full).split(path.sep).join('/')] : []
  })
}

const cache = new Map<string, SchemaValidator>()

/**
 * The validator over a schemas folder (compiled lazily, one per folder and process).
 * @example createSchemaValidator('/…/schemas/3.1.19', '3.1.19').errors('core/format.json', {}) // ['(root) must have …']
 */
export function createSchemaValidator(dir: string, version: string): SchemaValidator {
  const cached = cache.get(dir)
  if (cached) return cached
  const prefix = `/schemas/${version}/`
  let ajv: Ajv | undefined
  const load = (): Ajv => {
    if (ajv) return ajv
    ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false })
    addFormats(ajv)
    for (const format of ['uri-template', 'YYYYMMDD']) ajv.addFormat(format, true)
    for (const file of jsonFiles(dir)) {
      const schema = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { $id?: string }
      if (schema?.$id === `${prefix}${file}`) ajv.addSchema(schema)
    }
    return ajv
  }
  const compiled = new Map<string, ValidateFunction>()
  const get = (file: string): ValidateFunction | undefined => {
    let validate = compiled.get(file)
    if (!validate) {
      validate = load().getSchema(`${prefix}${file.replace(/^\/?schemas\/[^/]+\//, '')}`)
      if (validate) compiled.set(file, validate)
    }
    return validate
  }
  const validator: SchemaValidator = {
    version,
    has: (file) => get(file) !== undefined,
    required(file) {
      const schema = get(file)?.schema as { required?: unknown } | undefined
      return Array.isArray(schema?.required) ? (schema.required as string[]) : []
    },
    errors(file, value) {
      const validate = get(file)
      if (!validate) {
        throw new StoryboardError('bundle_invalid', `no official ${version} schema ${file} in ${dir}`)
      }
      if (validate(JSON.parse(JSON.stringify(value ?? null)))) return []
      return (validate.errors ?? []).map((error) =>
        `${error.instancePath || '(root)'} ${error.message ?? ''}`.trim(),
      )
    },
  }
  cache.set(dir, validator)
  return validator
}
