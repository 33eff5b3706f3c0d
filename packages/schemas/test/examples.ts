/** Collects every JSON example in the vendored storyboards, vectors and schemas that names its shape. */
import { readFileSync } from 'node:fs'
import { parse as parseYaml } from 'yaml'
import { conformancePath, listConformanceFiles, readConformanceJson } from '@adwire/conformance'

export interface Example {
  /** Where it comes from, for the test name. */
  readonly source: string
  /** The shape it claims: `file#pointer` below schemas/3.1.19. */
  readonly shape: string
  readonly value: unknown
}

type Node = Record<string, unknown>
const isObject = (value: unknown): value is Node =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function walk(value: unknown, visit: (node: Node, path: string) => void, path = ''): void {
  if (Array.isArray(value)) value.forEach((item, index) => walk(item, visit, `${path}[${index}]`))
  else if (isObject(value)) {
    visit(value, path)
    for (const [key, child] of Object.entries(value)) walk(child, visit, path ? `${path}.${key}` : key)
  }
}

/** Storyboard steps: `sample_request` against `schema_ref`, `sample_response` against `response_schema_ref`. */
export function storyboardExamples(): Example[] {
  const out: Example[] = []
  for (const file of listConformanceFiles('compliance/3.1.19', (name) => name.endsWith('.yaml'))) {
    const document = parseYaml(readFileSync(conformancePath('compliance/3.1.19', file), 'utf8'))
    walk(document, (node, path) => {
      if (
        typeof node.schema_ref === 'string' &&
        node.sample_request !== undefined &&
        node.sample_request_skip_schema !== true
      ) {
        out.push({
          source: `${file} ${path}.sample_request`,
          shape: `${node.schema_ref}#`,
          value: node.sample_request,
        })
      }
      if (typeof node.response_schema_ref === 'string' && node.sample_response !== undefined) {
        out.push({
          source: `${file} ${path}.sample_response`,
          shape: `${node.response_schema_ref}#`,
          value: node.sample_response,
        })
      }
    })
  }
  return out
}

/** `examples` given inside the schemas themselves. */
export function schemaExamples(): Example[] {
  const out: Example[] = []
  for (const file of listConformanceFiles('schemas/3.1.19', (name) => name.endsWith('.json'))) {
    const document = readConformanceJson('schemas/3.1.19', file)
    if (!isObject(document)) continue
    if (Array.isArray(document.examples)) {
      document.examples.forEach((value, index) =>
        out.push({ source: `${file} examples[${index}]`, shape: `${file}#`, value }),
      )
    }
    for (const [name, definition] of Object.entries(
      isObject(document.definitions) ? document.definitions : {},
    )) {
      if (isObject(definition) && Array.isArray(definition.examples)) {
        definition.examples.forEach((value, index) =>
          out.push({
            source: `${file} definitions.${name}.examples[${index}]`,
            shape: `${file}#/definitions/${name}`,
            value,
          }),
        )
      }
    }
  }
  return out
}

/** Webhook bodies in the vectors: MCP-shape envelopes. */
export function vectorExamples(): Example[] {
  const out: Example[] = []
  const extraction = readConformanceJson('test-vectors/webhook-payload-extraction.json') as {
    vectors: Node[]
  }
  for (const vector of extraction.vectors) {
    if (vector.format === 'mcp') {
      out.push({
        source: `webhook-payload-extraction ${String(vector.id)}`,
        shape: 'core/mcp-webhook-payload.json#',
        value: vector.payload,
      })
    }
  }
  for (const folder of [
    'compliance/3.1.19/test-vectors/webhook-signing',
    'compliance/3.2.0-beta.5/test-vectors/webhook-signing',
  ]) {
    for (const file of listConformanceFiles(folder, (name) => /^(positive|negative)\/.*\.json$/.test(name))) {
      const vector = readConformanceJson(folder, file) as { request?: { body?: string } }
      const body = vector.request?.body
      if (typeof body === 'string' && body.startsWith('{')) {
        out.push({
          source: `${folder}/${file} request.body`,
          shape: 'core/mcp-webhook-payload.json#',
          value: JSON.parse(body),
        })
      }
    }
  }
  return out
}

/**
 * Resolves the storyboard runner's generated values the way the runner does: `$generate:uuid_v4#tag` becomes
 * a UUID v4 (derived from the tag, so runs are repeatable). `$context.*` and `{{...}}` name values captured
 * from earlier steps' responses at run time; they stay as they are and {@link hasRuntimePlaceholder} finds them.
 */
export function resolveGenerated(value: unknown): unknown {
  if (typeof value === 'string' && value.startsWith('$generate:uuid_v4')) return uuidFromTag(value)
  if (Array.isArray(value)) return value.map(resolveGenerated)
  if (isObject(value))
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, resolveGenerated(child)]))
  return value
}

function uuidFromTag(tag: string): string {
  let hex = ''
  let seed = 0x811c9dc5
  while (hex.length < 32) {
    for (const char of `${tag}#${hex.length}`) seed = Math.imul(seed ^ char.charCodeAt(0), 0x01000193) >>> 0
    hex += seed.toString(16).padStart(8, '0')
  }
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** True when a value still holds a `$context.*` or `{{...}}` placeholder filled in from an earlier step. */
export function hasRuntimePlaceholder(value: unknown): boolean {
  if (typeof value === 'string') return value.startsWith('$context.') || value.includes('{{')
  if (Array.isArray(value)) return value.some(hasRuntimePlaceholder)
  if (isObject(value)) return Object.values(value).some(hasRuntimePlaceholder)
  return false
}
