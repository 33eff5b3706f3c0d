import { AdcpProtocolSchema } from '@adwire/schemas'
import type { z } from 'zod'
import type { AdcpProtocol, TaskDefinition, TaskDefinitionInput } from './types.js'

const protocolOf = (protocol: AdcpProtocol, tasks: readonly string[]) =>
  tasks.map((task) => [task, protocol] as const)

/** The protocol of AdCP's own tasks (3.1.19 task references and `enums/task-type.json`). */
const KNOWN_PROTOCOLS: ReadonlyMap<string, AdcpProtocol> = new Map([
  ...protocolOf('creative', [
    'list_creative_formats',
    'build_creative',
    'preview_creative',
    'sync_creatives',
    'list_creatives',
    'get_creative_delivery',
  ]),
  ...protocolOf('media-buy', [
    'get_products',
    'list_authorized_properties',
    'create_media_buy',
    'update_media_buy',
    'get_media_buys',
    'get_media_buy_delivery',
    'media_buy_delivery',
    'provide_performance_feedback',
    'sync_event_sources',
    'sync_audiences',
    'sync_catalogs',
    'log_event',
  ]),
  ...protocolOf('signals', ['get_signals', 'activate_signal']),
  ...protocolOf('governance', [
    'create_property_list',
    'update_property_list',
    'get_property_list',
    'list_property_lists',
    'delete_property_list',
  ]),
  ...protocolOf('brand', ['get_brand_identity', 'search_brands', 'get_rights', 'acquire_rights']),
])

/** The protocol a task named `name` belongs to when AdCP defines it, else undefined. */
export function defaultProtocol(name: string): AdcpProtocol | undefined {
  return KNOWN_PROTOCOLS.get(name)
}

/**
 * Declares an AdCP task once; {@link createAgentServer} serves it as an MCP tool and an A2A skill. The
 * envelope fields (`idempotency_key`, `context`, `push_notification_config`, ...) are accepted even when
 * `input` is strict: they are stripped before validation (unless `input` declares them) and handed to the
 * handler in `context.envelope`. `protocol` (sent in webhook envelopes) defaults to AdCP's for known task
 * names.
 *
 * @example
 * const listThings = defineTask({
 *   name: 'list_things',
 *   description: 'Lists things',
 *   input: z.object({ limit: z.number().int().optional() }).strict(),
 *   output: z.object({ things: z.array(z.string()) }),
 *   access: 'public',
 *   protocol: 'creative',
 *   handler: async ({ limit }) => ({ things: ['a', 'b'].slice(0, limit) }),
 * })
 */
export function defineTask<I extends z.ZodType, O extends z.ZodType>(
  definition: TaskDefinitionInput<I, O>,
): TaskDefinition<I, O> {
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(definition.name))
    throw new TypeError(`task name must be snake_case: ${definition.name}`)
  if (definition.protocol !== undefined && !AdcpProtocolSchema.safeParse(definition.protocol).success)
    throw new TypeError(
      `task ${definition.name}: protocol must be one of ${AdcpProtocolSchema.options.join(', ')}, not ${String(definition.protocol)}`,
    )
  const protocol = definition.protocol ?? defaultProtocol(definition.name)
  return { ...definition, idempotent: definition.idempotent ?? false, protocol }
}
