/**
 * How every sales-agent task is declared: the input is the official 3.1.19 request schema (checked with the
 * agents' shared `parseRequest`, on the schema @adwire/schemas generates from it, inside the zod input, so a malformed request is answered before authentication's idempotency lookup runs its
 * handler), with the envelope fields kept in the input so the schema sees the whole request; push URLs are
 * checked for https and public addresses; the output is the handler's object (tests check it against the
 * official response schemas).
 */
import {
  AgentError,
  assertWebhookUrl,
  defineTask,
  type Access,
  type AnyTask,
  type TaskContext,
} from '@adwire/agent-server'
import { z } from 'zod'
import { assertOfficial, officialToolSchema } from '../validation/official.js'
import { for30, from30, speaks30 } from './release-30.js'

/** A request as the handler sees it: the whole JSON object, envelope fields included. */
export type Request = Record<string, unknown>

export interface SellerTaskSpec {
  readonly name: string
  readonly description: string
  /**
   * The official request schema file, e.g. `media-buy/create-media-buy-request.json`; or a check of its own for
   * the tasks 3.1.19 has no schema for (sync_principal, sync_agent_notification_configs).
   */
  readonly request: string | ((request: Request) => void)
  /**
   * The MCP tool's declared `inputSchema` when `request` is a check of its own: the official request file the
   * request follows (declared as `officialToolSchema` gives it), or the JSON Schema of a request 3.1.19 has no
   * file for. Clients strip the arguments a tool does not declare, so a tool declaring only the envelope loses
   * the whole request.
   */
  readonly declares?: string | Readonly<Record<string, unknown>>
  /**
   * The MCP tool's `inputSchema` when the official schema agent-server finds by the task name is not this
   * seller's (list_creative_formats: the creative agent's request has the same name).
   */
  readonly requestSchema?: z.ZodType
  readonly access: Access
  readonly idempotent?: boolean
  readonly handler: (input: Request, context: TaskContext) => Promise<object> | object
}

export interface DefineOptions {
  readonly allowInsecureWebhookUrls: boolean
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The URLs of webhook registrations a request carries (push, reporting, artifact, notification configs). */
function webhookUrls(input: Request): { field: string; url: unknown }[] {
  const found: { field: string; url: unknown }[] = []
  for (const field of ['push_notification_config', 'reporting_webhook', 'artifact_webhook'])
    if (isObject(input[field])) found.push({ field, url: (input[field] as Request).url })
  const configs = (list: unknown, prefix: string) => {
    if (Array.isArray(list))
      list.forEach((config, index) => {
        if (isObject(config)) found.push({ field: `${prefix}[${index}]`, url: config.url })
      })
  }
  configs(input.notification_configs, 'notification_configs')
  if (Array.isArray(input.accounts))
    input.accounts.forEach((account, index) => {
      if (isObject(account)) configs(account.notification_configs, `accounts[${index}].notification_configs`)
    })
  return found
}

/** The AdCP releases this agent serves (a release of the same major is served at the closest one). */
export const SUPPORTED_VERSIONS = ['3.0', '3.1'] as const

/** VERSION_UNSUPPORTED for a request pinned to another major version (adcp_major_version or adcp_version). */
export function assertSupportedVersion(request: Request): void {
  const major = request.adcp_major_version
  const release = request.adcp_version
  const releaseMajor = typeof release === 'string' ? release.split('.')[0] : undefined
  const unsupported = (major !== undefined && major !== 3) || (release !== undefined && releaseMajor !== '3')
  if (unsupported)
    throw new AgentError(
      'VERSION_UNSUPPORTED',
      `this agent serves AdCP ${SUPPORTED_VERSIONS.join(' and ')}; the request asks for ${String(release ?? major)}`,
      {
        field: release !== undefined ? 'adcp_version' : 'adcp_major_version',
        status: 400,
        details: { supported_versions: [...SUPPORTED_VERSIONS], major_versions: [3] },
      },
    )
}

const ENVELOPE_PROPERTIES = {
  idempotency_key: { type: 'string' },
  context: { type: 'object' },
  ext: { type: 'object' },
  push_notification_config: { type: 'object' },
  adcp_major_version: { type: 'integer' },
  adcp_version: { type: 'string' },
}

function declaredSchema(spec: SellerTaskSpec): { requestJsonSchema?: Readonly<Record<string, unknown>> } {
  const declared = spec.declares ?? (typeof spec.request === 'string' ? spec.request : undefined)
  if (declared === undefined) return {}
  if (typeof declared === 'string') return { requestJsonSchema: officialToolSchema(declared) }
  const properties = (declared.properties ?? {}) as Record<string, unknown>
  return {
    requestJsonSchema: { type: 'object', ...declared, properties: { ...ENVELOPE_PROPERTIES, ...properties } },
  }
}

/**
 * @example
 * sellerTask({ name: 'get_products', request: 'media-buy/get-products-request.json', access: 'public', handler }, options)
 */
export function sellerTask(spec: SellerTaskSpec, options: DefineOptions): AnyTask {
  const input = z
    .looseObject({
      idempotency_key: z.unknown().optional(),
      context: z.unknown().optional(),
      push_notification_config: z.unknown().optional(),
      adcp_major_version: z.unknown().optional(),
      adcp_version: z.unknown().optional(),
    })
    .superRefine((raw) => {
      assertSupportedVersion(raw)
      const value = spec.name === 'sync_governance' && speaks30(raw) ? from30(raw) : raw
      if (typeof spec.request === 'string') assertOfficial(spec.request, value)
      else spec.request(value)
      for (const { field, url } of webhookUrls(value))
        if (typeof url === 'string') assertWebhookUrl(url, options.allowInsecureWebhookUrls, `${field}.url`)
    })
  return defineTask({
    name: spec.name,
    description: spec.description,
    input,
    output: z.looseObject({}),
    access: spec.access,
    idempotent: spec.idempotent ?? false,
    ...(spec.requestSchema ? { requestSchema: spec.requestSchema } : {}),
    // The MCP tool declares every field of the official request (clients strip what a tool does not declare).
    ...(!spec.requestSchema ? declaredSchema(spec) : {}),
    // Every 3.1 response carries the protocol envelope's `status` (core/protocol-envelope.json).
    handler: async (request, context) => {
      // A 3.0-era buyer's request in its 3.1.19 shape (see release-30.ts), as it was checked.
      const input = spec.name === 'sync_governance' && speaks30(request) ? from30(request) : request
      const answer = (await spec.handler(input as Request, context)) as Record<string, unknown>
      // A 3.0-era buyer (adcp_major_version only) gets 3.0's closed enums (see release-30.ts).
      const response = speaks30(request) ? for30(answer) : answer
      // A first execution says so (`replayed: false`); the task server marks a replay `replayed: true`.
      const first = spec.idempotent ? { replayed: false } : {}
      return 'status' in response ? { ...response, ...first } : { status: 'completed', ...response, ...first }
    },
  })
}
