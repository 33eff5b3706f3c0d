/**
 * @adwire/adcp-data: the official AdCP 3.1.19 JSON Schemas, compliance bundle (storyboards and test kits) and
 * registry OpenAPI document as files, laid out as the AdCP release lays them out (`schemas/3.1.19/`,
 * `compliance/3.1.19/`, `openapi/registry.yaml`), with the AdCP project's LICENSE and the SHA-256 of every file
 * (`MANIFEST.sha256`), and the one locator and small readers over them (Node).
 */
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The AdCP release whose data this package carries. */
export const ADCP_VERSION = '3.1.19'

/**
 * Absolute path of the data folder (`dist/adcp/` of this package): `LICENSE`, `MANIFEST.sha256`,
 * `schemas/3.1.19/`, `compliance/3.1.19/`, `openapi/registry.yaml`.
 */
export const adcpDataRoot: string = fileURLToPath(new URL('../dist/adcp/', import.meta.url))

/**
 * Absolute path of a file or folder of the data.
 *
 * @example adcpDataPath('schemas', ADCP_VERSION, 'core/format.json') // '/…/@adwire/adcp-data/dist/adcp/schemas/3.1.19/core/format.json'
 */
export function adcpDataPath(...segments: string[]): string {
  return path.join(adcpDataRoot, ...segments)
}

/** Absolute path of the 3.1.19 JSON Schemas (`schemas/3.1.19/`); a schema's `$id` is `/schemas/3.1.19/<file>`. */
export const schemasDir: string = adcpDataPath('schemas', ADCP_VERSION)

/**
 * Absolute path of the 3.1.19 compliance bundle (`compliance/3.1.19/`: `index.json`, `universal/`, `protocols/`,
 * `domains/`, `specialisms/`, `test-kits/`, `test-vectors/`), the storyboards `@adwire/storyboards` runs.
 *
 * @example loadBundle(complianceDir) // with loadBundle of @adwire/storyboards
 */
export const complianceDir: string = adcpDataPath('compliance', ADCP_VERSION)

/** Absolute path of the 3.1.19 compliance test kits (`compliance/3.1.19/test-kits/*.yaml`). */
export const testKitsDir: string = adcpDataPath('compliance', ADCP_VERSION, 'test-kits')

/**
 * Absolute path of the OpenAPI 3.1 description of the AdCP registry API (`openapi/registry.yaml`).
 *
 * @example parse(readFileSync(registryOpenApiFile, 'utf8')).openapi // '3.1.0' (with parse of the yaml package)
 */
export const registryOpenApiFile: string = adcpDataPath('openapi', 'registry.yaml')

function filesBelow(dir: string, base: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return filesBelow(full, base)
    return entry.isFile() ? [path.relative(base, full).split(path.sep).join('/')] : []
  })
}

/**
 * Every JSON Schema file, relative to {@link schemasDir} with `/` separators, sorted.
 *
 * @example listSchemaFiles().includes('media-buy/create-media-buy-request.json') // true
 */
export function listSchemaFiles(): string[] {
  return filesBelow(schemasDir, schemasDir)
    .filter((file) => file.endsWith('.json'))
    .sort()
}

/** A JSON Schema document: parsed JSON, its `$id` and keywords as the file gives them. */
export type JsonSchemaDocument = Record<string, unknown> & { readonly $id?: string }

/**
 * The parsed JSON Schema of a file below {@link schemasDir}; throws when there is none.
 *
 * @example readSchema('core/format.json').$id // '/schemas/3.1.19/core/format.json'
 */
export function readSchema(file: string): JsonSchemaDocument {
  return JSON.parse(readFileSync(path.join(schemasDir, file), 'utf8')) as JsonSchemaDocument
}

/** What {@link verifyAdcpData} found: files whose bytes differ, listed but absent, present but not listed. */
export interface DataCheck {
  readonly checked: number
  readonly changed: readonly string[]
  readonly missing: readonly string[]
  readonly unlisted: readonly string[]
}

/**
 * Compares the data with its `MANIFEST.sha256` (the lines of the AdCP data this repository vendors); all three
 * lists are empty for an intact copy.
 *
 * @example verifyAdcpData() // { checked: 960, changed: [], missing: [], unlisted: [] }
 */
export function verifyAdcpData(): DataCheck {
  const expected = new Map<string, string>()
  for (const line of readFileSync(adcpDataPath('MANIFEST.sha256'), 'utf8').split('\n')) {
    const match = /^([0-9a-f]{64}) {2}(.+)$/.exec(line)
    if (match) expected.set(match[2]!, match[1]!)
  }
  const present = new Set(filesBelow(adcpDataRoot, adcpDataRoot).filter((file) => file !== 'MANIFEST.sha256'))
  const changed: string[] = []
  const missing: string[] = []
  for (const [file, digest] of expected) {
    if (!present.has(file)) missing.push(file)
    else if (
      createHash('sha256')
        .update(readFileSync(adcpDataPath(file)))
        .digest('hex') !== digest
    )
      changed.push(file)
  }
  const unlisted = [...present].filter((file) => !expected.has(file)).sort()
  return { checked: expected.size, changed, missing, unlisted }
}
