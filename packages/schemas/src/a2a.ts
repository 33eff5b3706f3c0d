/**
 * A2A shapes that carry AdCP data: Task, TaskStatusUpdateEvent and their parts.
 *
 * Hand-written: A2A is not part of the AdCP JSON Schemas. They accept both A2A v0.3 (lowercase states,
 * `kind` on parts and events) and A2A 1.0 (`TASK_STATE_*` states, parts without `kind`, the StreamResponse
 * wrappers `{task}` / `{statusUpdate}`), as the AdCP 3.1 A2A guide and the payload-extraction vectors do.
 */
import { z } from 'zod'

/** A text part: `{kind: "text", text}` (v0.3) or `{text}` (1.0). */
export const A2ATextPartSchema = z.looseObject({ kind: z.literal('text').optional(), text: z.string() })
/** A data part: `{kind: "data", data}` (v0.3) or `{data}` (1.0); AdCP payloads ride in `data`. */
export const A2ADataPartSchema = z.looseObject({
  kind: z.literal('data').optional(),
  data: z.record(z.string(), z.unknown()),
})
/** A file part: `{kind: "file", file}` (v0.3) or a 1.0 part with `url`/`raw`. */
export const A2AFilePartSchema = z.looseObject({
  kind: z.literal('file').optional(),
  file: z.unknown().optional(),
})
export const A2APartSchema = z.union([A2ADataPartSchema, A2ATextPartSchema, A2AFilePartSchema])
export type A2APart = z.infer<typeof A2APartSchema>

export const A2AMessageSchema = z.looseObject({
  role: z.string().optional(),
  parts: z.array(A2APartSchema),
  messageId: z.string().optional(),
  taskId: z.string().optional(),
  contextId: z.string().optional(),
  kind: z.literal('message').optional(),
})
export type A2AMessage = z.infer<typeof A2AMessageSchema>

/** A task state: v0.3 `completed`, `input-required`, ... or 1.0 `TASK_STATE_COMPLETED`, ... */
export const A2ATaskStateSchema = z.string().min(1)

export const A2ATaskStatusSchema = z.looseObject({
  state: A2ATaskStateSchema,
  message: A2AMessageSchema.optional(),
  timestamp: z.string().optional(),
})
export type A2ATaskStatus = z.infer<typeof A2ATaskStatusSchema>

export const A2AArtifactSchema = z.looseObject({
  artifactId: z.string().optional(),
  name: z.string().optional(),
  parts: z.array(A2APartSchema),
})
export type A2AArtifact = z.infer<typeof A2AArtifactSchema>

/** An A2A Task as delivered to a push-notification URL. */
export const A2ATaskSchema = z.looseObject({
  id: z.string().min(1),
  contextId: z.string().optional(),
  status: A2ATaskStatusSchema,
  artifacts: z.array(A2AArtifactSchema).optional(),
  history: z.array(A2AMessageSchema).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  kind: z.literal('task').optional(),
})
export type A2ATask = z.infer<typeof A2ATaskSchema>

/** An A2A TaskStatusUpdateEvent: an interim (or final) status change of a task. */
export const A2ATaskStatusUpdateEventSchema = z.looseObject({
  taskId: z.string().min(1),
  contextId: z.string().optional(),
  status: A2ATaskStatusSchema,
  final: z.boolean().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  kind: z.literal('status-update').optional(),
})
export type A2ATaskStatusUpdateEvent = z.infer<typeof A2ATaskStatusUpdateEventSchema>

const A2A_STATES: Readonly<Record<string, string>> = {
  TASK_STATE_SUBMITTED: 'submitted',
  TASK_STATE_WORKING: 'working',
  TASK_STATE_INPUT_REQUIRED: 'input-required',
  TASK_STATE_AUTH_REQUIRED: 'auth-required',
  TASK_STATE_COMPLETED: 'completed',
  TASK_STATE_FAILED: 'failed',
  TASK_STATE_CANCELED: 'canceled',
  TASK_STATE_CANCELLED: 'canceled',
  TASK_STATE_REJECTED: 'rejected',
  TASK_STATE_UNSPECIFIED: 'unknown',
}

/** Maps an A2A state of either version to the AdCP task status spelling (`TASK_STATE_INPUT_REQUIRED` → `input-required`). */
export function normalizeA2AState(state: string): string {
  return A2A_STATES[state] ?? state.toLowerCase()
}

/** AdCP task statuses after which nothing more happens to a task. */
export const TERMINAL_TASK_STATUSES: ReadonlySet<string> = new Set([
  'completed',
  'failed',
  'canceled',
  'rejected',
])
