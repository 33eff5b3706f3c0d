/**
 * Requests are checked against their AdCP 3.1.19 shapes before a task runs, with the one request check the
 * agents share (`parseRequest` of @adwire/agent-server, on the zod schemas @adwire/schemas generates from the
 * official JSON Schemas and tests against Ajv): a request the schema refuses is INVALID_REQUEST naming the first
 * offending field, never a 500.
 */
import { readSchema } from '@adwire/adcp-data'
import { parseRequest, requestProblem, type RequestProblem } from '@adwire/agent-server'
import {
  ComplyTestControllerRequestSchema,
  CreateMediaBuyRequestSchema,
  GetAdcpCapabilitiesRequestSchema,
  GetMediaBuyDeliveryRequestSchema,
  GetMediaBuysRequestSchema,
  GetProductsRequestSchema,
  GetTaskStatusRequestSchema,
  ListAccountsRequestSchema,
  ListCreativesRequestSchema,
  MediaBuyListCreativeFormatsRequestSchema,
  ProvidePerformanceFeedbackRequestSchema,
  SyncAccountsRequestSchema,
  SyncCreativesRequestSchema,
  SyncGovernanceRequestSchema,
  UpdateMediaBuyRequestSchema,
} from '@adwire/schemas'
import type { z } from 'zod'

/** The generated schema of each official request file a seller task names (typed loosely below: checking
 * each generated type against z.ZodType is too deep an instantiation for tsc). */
const REQUEST_SCHEMAS = {
  'account/list-accounts-request.json': ListAccountsRequestSchema,
  'account/sync-accounts-request.json': SyncAccountsRequestSchema,
  'account/sync-governance-request.json': SyncGovernanceRequestSchema,
  'compliance/comply-test-controller-request.json': ComplyTestControllerRequestSchema,
  'creative/list-creatives-request.json': ListCreativesRequestSchema,
  'creative/sync-creatives-request.json': SyncCreativesRequestSchema,
  'media-buy/create-media-buy-request.json': CreateMediaBuyRequestSchema,
  'media-buy/get-media-buy-delivery-request.json': GetMediaBuyDeliveryRequestSchema,
  'media-buy/get-media-buys-request.json': GetMediaBuysRequestSchema,
  'media-buy/get-products-request.json': GetProductsRequestSchema,
  'media-buy/list-creative-formats-request.json': MediaBuyListCreativeFormatsRequestSchema,
  'media-buy/provide-performance-feedback-request.json': ProvidePerformanceFeedbackRequestSchema,
  'media-buy/update-media-buy-request.json': UpdateMediaBuyRequestSchema,
  'protocol/get-adcp-capabilities-request.json': GetAdcpCapabilitiesRequestSchema,
  'protocol/get-task-status-request.json': GetTaskStatusRequestSchema,
}

/**
 * The generated schema of an official request file (e.g. `media-buy/create-media-buy-request.json`); throws
 * for a file that is not one of the seller's requests.
 *
 * @example requestSchema('media-buy/get-products-request.json') // GetProductsRequestSchema
 */
export function requestSchema(file: string): z.ZodType {
  const schema = (REQUEST_SCHEMAS as Readonly<Record<string, unknown>>)[file] as z.ZodType | undefined
  if (!schema)
    throw new Error(`no generated request schema for ${file} (see @adwire/schemas scripts/roots.ts)`)
  return schema
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

/**
 * Throws INVALID_REQUEST when `value` is not a request of the official schema `file`.
 *
 * @example assertOfficial('media-buy/get-products-request.json', { buying_mode: 'auction' }) // throws, field 'buying_mode'
 */
export function assertOfficial(file: string, value: unknown): void {
  parseRequest(requestSchema(file), value, `request (${file})`)
}

/**
 * The problems `value` has against the official schema `file`: the first one's `field` (`''` for the request
 * itself), a message, and every issue; undefined when valid.
 *
 * @example
 * officialProblem('compliance/comply-test-controller-request.json', request)?.field // 'params.creative_id'
 */
export function officialProblem(file: string, value: unknown): RequestProblem | undefined {
  return requestProblem(requestSchema(file), value, `request (${file})`)
}
