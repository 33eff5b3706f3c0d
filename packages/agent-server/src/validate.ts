import { formatPath } from '@adwire/schemas'
import { z } from 'zod'
import { AgentError } from './errors.js'
import type { AnyTask, Envelope } from './types.js'

/** The envelope members every task accepts (AdCP 3.1 protocol envelope and request-level fields). */
export const ENVELOPE_FIELDS = [
  'idempotency_key',
  'context',
  'context_id',
  'push_notification_config',
  'governance_context',
  'adcp_major_version',
  'adcp_version',
] as const

const EnvelopeSchema = z.object({
  idempotency_key: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{16,255}$/, 'must be 16 to 255 characters of [A-Za-z0-9_.:-]')
    .optional(),
  context: z.record(z.string(), z.unknown()).optional(),
  context_id: z.string().optional(),
  push_notification_config: z
    .looseObject({
      url: z.url(),
      operation_id: z.string().min(1).optional(),
      token: z.string().min(16).max(4096).optional(),
      authentication: z
        .object({ schemes: z.array(z.string()).min(1), credentials: z.string().min(32) })
        .optional(),
    })
    .optional(),
  governance_context: z.unknown().optional(),
  adcp_major_version: z.number().int().optional(),
  adcp_version: z.string().optional(),
})

type Issue = z.core.$ZodIssue

function isBareFormatId(issue: Issue, path: readonly PropertyKey[]): boolean {
  if (issue.code !== 'invalid_type' || issue.expected !== 'object') return false
  const last = path.at(-1)
  const before = path.at(-2)
  return (
    last === 'format_id' ||
    last === 'target_format_id' ||
    (typeof last === 'number' && (before === 'format_ids' || before === 'target_format_ids'))
  )
}

/** Flattens union branches so that a bare format_id inside a union is still recognised. */
function* flatten(
  issues: readonly Issue[],
  prefix: readonly PropertyKey[] = [],
): Generator<[Issue, PropertyKey[]]> {
  for (const issue of issues) {
    const path = [...prefix, ...issue.path]
    if (issue.code === 'invalid_union' && issue.errors.length > 0)
      for (const branch of issue.errors) yield* flatten(branch, path)
    else yield [issue, path]
  }
}

/** Turns zod issues into the AgentError to send: INVALID_FORMAT_ID for a bare-string format_id, else INVALID_REQUEST. */
export function issuesToError(issues: readonly Issue[], what: string): AgentError {
  const flat = [...flatten(issues)]
  const bare = flat.find(([issue, path]) => isBareFormatId(issue, path))
  if (bare) {
    const field = formatPath(bare[1])
    return new AgentError(
      'INVALID_FORMAT_ID',
      `${field}: a format_id is the object {"agent_url", "id"}, not a string`,
      { field, status: 400 },
    )
  }
  const first = issues[0]
  const field = first ? formatPath(first.path) : undefined
  const summary = issues
    .slice(0, 5)
    .map((issue) => `${formatPath(issue.path) || '(root)'}: ${issue.message}`)
    .join('; ')
  return new AgentError('INVALID_REQUEST', `invalid ${what}: ${summary}`, {
    ...(field ? { field } : {}),
    status: 400,
    details: { issues: issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message })) },
  })
}

function declaredKeys(schema: z.ZodType): ReadonlySet<string> {
  const shape = (schema as { shape?: unknown }).shape
  return new Set(shape && typeof shape === 'object' ? Object.keys(shape) : [])
}

/**
 * Splits raw task arguments into the envelope and the task input, then validates both. Envelope fields the
 * input schema declares itself stay in the input too.
 */
export function parseArguments(task: AnyTask, args: unknown): { envelope: Envelope; input: unknown } {
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw new AgentError('INVALID_REQUEST', 'task arguments must be a JSON object', { status: 400 })
  const record = args as Record<string, unknown>
  const declared = declaredKeys(task.input)
  const rawEnvelope: Record<string, unknown> = {}
  const rawInput: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(record)) {
    const isEnvelope = (ENVELOPE_FIELDS as readonly string[]).includes(key)
    if (isEnvelope) rawEnvelope[key] = value
    if (!isEnvelope || declared.has(key)) rawInput[key] = value
  }
  const envelope = EnvelopeSchema.safeParse(rawEnvelope)
  if (!envelope.success) throw issuesToError(envelope.error.issues, 'envelope')
  const input = task.input.safeParse(rawInput)
  if (!input.success) throw issuesToError(input.error.issues, `${task.name} request`)
  return { envelope: envelope.data as Envelope, input: input.data }
}

/** Validates a handler's final result against the task's output schema (a failure is the agent's bug). */
export function parseOutput(task: AnyTask, output: unknown): Record<string, unknown> {
  const result = task.output.safeParse(output)
  if (!result.success)
    throw new AgentError('INTERNAL_ERROR', `${task.name} produced an invalid response`, {
      cause: result.error,
    })
  return result.data as Record<string, unknown>
}
