import { TaskStatusSchema, TERMINAL_TASK_STATUSES } from '@adwire/schemas'
import {
  WebhookError,
  type TaskEvent,
  type TaskPushNotificationConfigInput,
  type WebhookRegistration,
  type WebhookSender,
} from '@adwire/webhooks'
import { AgentError } from './errors.js'
import type { AnyTask, Envelope, TaskUpdates } from './types.js'
import { parseOutput } from './validate.js'

/**
 * Where the status pushes of one call go, decided by how the buyer registered: the `push_notification_config`
 * task argument (MCP-shape envelopes) and the A2A `taskPushNotificationConfig` (A2A-shape, in the A2A version the
 * message was sent in), each when given.
 * The channels are independent: a buyer that registered both gets one webhook per channel per change.
 */
export function registrationsFor(
  envelope: Envelope,
  a2aPush: TaskPushNotificationConfigInput | undefined,
  a2aVersion?: '0.3' | '1.0',
): WebhookRegistration[] {
  const context = envelope.context
  const registrations: WebhookRegistration[] = []
  if (envelope.push_notification_config)
    registrations.push({
      channel: 'adcp',
      config: envelope.push_notification_config,
      ...(context ? { context } : {}),
    })
  if (a2aPush)
    registrations.push({
      channel: 'a2a',
      config: a2aPush,
      ...(a2aVersion ? { a2aVersion } : {}),
      ...(context ? { context } : {}),
    })
  return registrations
}

/** The pushes of one task: its last status, and the pushes in call order. */
/**
 * A failed (or rejected) task's result as the official extraction rules read it
 * (`webhook-payload-extraction.json`, `a2a-response-extraction.json`): the AdCP error as `adcp_error` beside
 * the payload `errors[]`, the request's `context` echoed.
 */
function withAdcpError(
  result: Readonly<Record<string, unknown>> | undefined,
  envelope: Envelope,
): Readonly<Record<string, unknown>> | undefined {
  if (!result) return result
  const errors = Array.isArray(result.errors) ? (result.errors as unknown[]) : []
  const first = errors[0]
  return {
    ...result,
    ...(result.adcp_error === undefined && typeof first === 'object' && first !== null
      ? { adcp_error: first }
      : {}),
    ...(envelope.context && result.context === undefined ? { context: envelope.context } : {}),
  }
}

interface TaskStream {
  status: string
  tail: Promise<unknown>
}

/**
 * Builds `context.updates` for one call. The webhook stream starts from the status the call answered
 * (`submitted` until the handler has returned), so an unchanged status sends nothing and a terminal initial
 * response never sends a webhook; nothing is sent after a terminal status (`webhook_after_terminal`). Each
 * MCP-shape envelope carries the task's `protocol` (`core/mcp-webhook-payload.json`).
 */
export function createUpdates(options: {
  task: AnyTask
  envelope: Envelope
  sender: WebhookSender | undefined
  registrations: readonly WebhookRegistration[]
  initialStatus: (taskId: string) => string | undefined
}): (taskId: string) => TaskUpdates {
  const streams = new Map<string, TaskStream>()
  return (taskId) => ({
    async update(status, result, message) {
      const initial = options.initialStatus(taskId) ?? 'submitted'
      if (initial !== 'submitted' && initial !== 'working')
        throw new AgentError('INVALID_STATE', `task ${taskId} answered ${initial}: it has no later updates`)
      if (!TaskStatusSchema.safeParse(status).success)
        throw new AgentError('INVALID_REQUEST', `"${String(status)}" is not a task status`)
      let body = result
      if (status === 'completed' && result !== undefined) {
        body = parseOutput(options.task, result)
        if (options.envelope.context) body = { ...body, context: options.envelope.context }
      }
      if (status === 'failed' || status === 'rejected') body = withAdcpError(body, options.envelope)
      const { sender, registrations } = options
      if (!sender || registrations.length === 0) return
      let stream = streams.get(taskId)
      if (!stream) {
        stream = { status: initial, tail: Promise.resolve() }
        streams.set(taskId, stream)
      }
      const current = stream
      const push = async (): Promise<void> => {
        if (TERMINAL_TASK_STATUSES.has(current.status))
          throw new WebhookError(
            'webhook_after_terminal',
            `task ${taskId} already reported "${current.status}": nothing more fires for it`,
          )
        if (status === current.status) return
        const event: TaskEvent = {
          task_id: taskId,
          task_type: options.task.name,
          status,
          ...(options.task.protocol !== undefined ? { protocol: options.task.protocol } : {}),
          ...(body !== undefined ? { result: body } : {}),
          ...(message !== undefined ? { message } : {}),
        }
        // One webhook per registered channel; the status moves on once every channel has it durably queued.
        for (const registration of registrations) await sender.notify(registration, event)
        current.status = status
      }
      const pushed = current.tail.then(push, push)
      current.tail = pushed.catch(() => undefined)
      await pushed
    },
  })
}
