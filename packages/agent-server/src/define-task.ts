import type { z } from 'zod'
import type { TaskDefinition, TaskDefinitionInput } from './types.js'

/**
 * Declares an AdCP task once; {@link createAgentServer} serves it as an MCP tool and an A2A skill. The
 * envelope fields (`idempotency_key`, `context`, `push_notification_config`, ...) are accepted even when
 * `input` is strict: they are stripped before validation (unless `input` declares them) and handed to the
 * handler in `context.envelope`.
 *
 * @example
 * const listThings = defineTask({
 *   name: 'list_things',
 *   description: 'Lists things',
 *   input: z.object({ limit: z.number().int().optional() }).strict(),
 *   output: z.object({ things: z.array(z.string()) }),
 *   access: 'public',
 *   handler: async ({ limit }) => ({ things: ['a', 'b'].slice(0, limit) }),
 * })
 */
export function defineTask<I extends z.ZodType, O extends z.ZodType>(
  definition: TaskDefinitionInput<I, O>,
): TaskDefinition<I, O> {
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(definition.name))
    throw new TypeError(`task name must be snake_case: ${definition.name}`)
  return { ...definition, idempotent: definition.idempotent ?? false }
}
