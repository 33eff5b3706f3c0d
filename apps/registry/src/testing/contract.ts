/**
 * The contract check of the tests against the upstream document as vendored (`conformance/openapi/registry.yaml`),
 * not the served copy: a status the upstream lists must match its schema there (except the success schemas
 * this service documents as replaced), and any other status must be one of the service's documented additions
 * and carry the upstream `Error`.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { addedStatuses, REPLACED_SCHEMAS, upstreamDocument, type JsonObject } from '../spec/openapi.js'
import { describeErrors } from '../spec/validators.js'

const DOCUMENT_ID = 'https://adwire.invalid/upstream-registry.json'

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as typeof addFormatsModule

let ajv: Ajv2020 | undefined
let document: JsonObject | undefined
const compiled = new Map<string, ValidateFunction>()

function upstream(): { ajv: Ajv2020; document: JsonObject } {
  if (!ajv || !document) {
    document = upstreamDocument()
    ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, validateFormats: true })
    addFormats(ajv)
    ajv.addSchema({ ...document, $id: DOCUMENT_ID })
  }
  return { ajv, document }
}

const pointer = (...segments: string[]) =>
  segments.map((segment) => segment.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')

function validator(segments: string[]): ValidateFunction {
  const key = segments.join('\u0000')
  let found = compiled.get(key)
  if (!found) {
    found = upstream().ajv.compile({ $ref: `${DOCUMENT_ID}#/${pointer(...segments)}` })
    compiled.set(key, found)
  }
  return found
}

/** `undefined` when the response conforms to the upstream document (plus documented additions), else why not. */
export function checkUpstreamResponse(
  operationId: string,
  status: number,
  body: unknown,
): string | undefined {
  const { document } = upstream()
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, JsonObject>>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (operation.operationId !== operationId) continue
      const responses = (operation.responses ?? {}) as Record<string, JsonObject>
      const declared = responses[String(status)]
      if (!declared) {
        if (!addedStatuses(operation)[String(status)]) {
          return `upstream: status ${status} is neither listed for ${operationId} nor a documented addition`
        }
        const check = validator(['components', 'schemas', 'Error'])
        return check(body) ? undefined : `upstream Error: ${describeErrors(check.errors)}`
      }
      const content = declared.content as Record<string, unknown> | undefined
      if (!content?.['application/json'] || REPLACED_SCHEMAS.has(`${operationId} ${status}`)) return undefined
      const check = validator([
        'paths',
        path,
        method,
        'responses',
        String(status),
        'content',
        'application/json',
        'schema',
      ])
      return check(body) ? undefined : `upstream ${operationId} ${status}: ${describeErrors(check.errors)}`
    }
  }
  return `upstream: no operation ${operationId}`
}

/** The operationId a method and path of the document answer to (path templates matched segment by segment). */
export function operationFor(method: string, pathname: string): string | undefined {
  const { document } = upstream()
  const segments = pathname.split('/')
  let best: { id: string; literal: number } | undefined
  for (const [template, item] of Object.entries(
    document.paths as Record<string, Record<string, JsonObject>>,
  )) {
    const operation = item[method.toLowerCase()]
    if (!operation) continue
    const parts = template.split('/')
    if (parts.length !== segments.length) continue
    let literal = 0
    const matches = parts.every((part, index) => {
      if (/^\{.+\}$/.test(part)) return segments[index] !== ''
      literal += 1
      return part === segments[index]
    })
    if (matches && (!best || literal > best.literal)) best = { id: String(operation.operationId), literal }
  }
  return best?.id
}

/**
 * A `fetch` for `@adwire/registry-client` that checks every JSON answer of a document operation against the
 * served document and the upstream one (`check`, e.g. the served-document check of `validators.ts`), and
 * throws on a mismatch (the client then rejects with that message as the cause).
 */
export function contractFetch(
  check: (operationId: string, status: number, body: unknown) => string | undefined,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const response = await fetch(request)
    const url = new URL(request.url)
    const operationId = operationFor(request.method, url.pathname)
    const type = response.headers.get('content-type') ?? ''
    if (!operationId || !type.startsWith('application/json')) return response
    const text = await response.clone().text()
    const body = text === '' ? undefined : (JSON.parse(text) as unknown)
    const problem =
      check(operationId, response.status, body) ?? checkUpstreamResponse(operationId, response.status, body)
    if (problem) throw new Error(`contract: ${problem} — body ${text.slice(0, 300)}`)
    return response
  }
}
