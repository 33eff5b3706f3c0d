import { TaskStatusSchema, TERMINAL_TASK_STATUSES } from '@adwire/schemas'
import {
  WebhookError,
  type TaskEvent,
  type TaskPushNotificationConfigInput,
  type WebhookRegistration,
  type WebhookSender,
} from '@adwire/webhooks'
import { AgentError } from './errors.js'
import type { AnyTask, Envelope, TaskUpdates, TaskWebhooks } from './types.js'
import { parseOutput } from './validate.js'

/**
 * Where the status pushes of one call go, decided by how the buyer registered: the `push_notification_config`
 * task argument (MCP-shape envelopes) and the A2A `taskPushNotificationConfig` (A2A-shape, in the A2A version the
 * message was sent in, carrying the id and contextId of the A2A Task the message created), each when given.
 * The channels are independent: a buyer that registered both gets one webhook per channel per change.
 */
export function registrationsFor(
  envelope: Envelope,
  a2aPush: TaskPushNotificationConfigInput | undefined,
  a2aVersion?: '0.3' | '1.0',
  a2aTask?: { readonly id: string; readonly contextId: string },
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
      ...(a2aTask ? { task: { id: a2aTask.id, contextId: a2aTask.contextId } } : {}),
      ...(context ? { context } : {}),
    })
  return registrations
}

/**
 * A failed (or rejected) task's result as the official extraction rules read it
 * (`webhook-payload-extraction.json`, `a2a-response-extraction.json`): the AdCP error as `adcp_error` beside
 * the payload `errors[]`, the request's `context` echoed.
 */
function withAdcpError(
  result: Readonly<Record<string, unknown>> | undefined,
  context: Readonly<Record<string, unknown>> | undefined,
): Readonly<Record<string, unknown>> | undefined {
  if (!result) return result
  const errors = Array.isArray(result.errors) ? (result.errors as unknown[]) : []
  const first = errors[0]
  return {
    ...result,
    ...(result.adcp_error === undefined && typeof first === 'object' && first !== null
      ? { adcp_error: first }
      : {}),
    ...(context && result.context === undefined ? { context } : {}),
  }
}

/** How one task's pushes are made: its declaration, its registrations and the request's `context`. */
interface StreamOptions {
  readonly task: AnyTask
  readonly taskId: string
  readonly context: Readonly<Record<string, unknown>> | undefined
  /** The task's AdCP session, echoed as `context_id` in its MCP-shape envelopes. */
  readonly contextId?: string
  readonly sender: WebhookSender | undefined
  readonly registrations: readonly WebhookRegistration[]
  /** The status the buyer last heard, read at the first update. */
  readonly initial: () => string
  /** Throws when the task may not be updated at all. */
  readonly check?: () => void
}

/**
 * An AdCP registration as the sender takes it: a `push_notification_config` without `operation_id` (the
 * schema's MAY; buyers on the 3.0 rules, the official AdCP client among them, route by URL and send none) gets
 * the task id as its operation id, since every webhook payload must carry one and it is never derived from the
 * URL. A given `operation_id` is echoed verbatim.
 */
export function withOperationId(registration: WebhookRegistration, taskId: string): WebhookRegistration {
  if (registration.channel !== 'adcp' || registration.config.operation_id !== undefined) return registration
  return { ...registration, config: { ...registration.config, operation_id: taskId } }
}

/**
 * The pushes of one task: each later status once per registered channel, nothing for an unchanged status,
 * nothing after a terminal one (`webhook_after_terminal`), one push at a time in call order.
 */
function taskStream(options: StreamOptions): TaskUpdates {
  const { task, taskId, context } = options
  let stream: { status: string; tail: Promise<unknown> } | undefined
  return {
    async update(status, result, message) {
      options.check?.()
      if (!TaskStatusSchema.safeParse(status).success)
        throw new AgentError('INVALID_REQUEST', `"${String(status)}" is not a task status`)
      let body = result
      if (status === 'completed' && result !== undefined) {
        body = parseOutput(task, result)
        if (context) body = { ...body, context }
      }
      if (status === 'failed' || status === 'rejected') body = withAdcpError(body, context)
      const { sender, registrations } = options
      if (!sender || registrations.length === 0) return
      stream ??= { status: options.initial(), tail: Promise.resolve() }
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
          task_type: task.name,
          status,
          ...(task.protocol !== undefined ? { protocol: task.protocol } : {}),
          ...(body !== undefined ? { result: body } : {}),
          ...(message !== undefined ? { message } : {}),
          ...(options.contextId !== undefined ? { context_id: options.contextId } : {}),
        }
        // One webhook per registered channel; the status moves on once every channel has it durably queued.
        for (const registration of registrations)
          await sender.notify(withOperationId(registration, taskId), event)
        current.status = status
      }
      const pushed = current.tail.then(push, push)
      current.tail = pushed.catch(() => undefined)
      await pushed
    },
  }
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
  const streams = new Map<string, TaskUpdates>()
  return (taskId) => {
    const initial = () => options.initialStatus(taskId) ?? 'submitted'
    let updates = streams.get(taskId)
    if (!updates) {
      updates = taskStream({
        task: options.task,
        taskId,
        context: options.envelope.context,
        sender: options.sender,
        registrations: options.registrations,
        initial,
        check: () => {
          const answered = initial()
          if (answered !== 'submitted' && answered !== 'working')
            throw new AgentError(
              'INVALID_STATE',
              `task ${taskId} answered ${answered}: it has no later updates`,
            )
        },
      })
      streams.set(taskId, updates)
    }
    return updates
  }
}

/** The registrations of one call as plain JSON, to store with its task (see {@link resumeTaskUpdates}). */
export function taskWebhooks(
  task: AnyTask,
  envelope: Envelope,
  registrations: readonly WebhookRegistration[],
): TaskWebhooks {
  return {
    task: task.name,
    registrations: JSON.parse(JSON.stringify(registrations)) as WebhookRegistration[],
    ...(envelope.context ? { context: envelope.context } : {}),
  }
}

/**
 * The TaskUpdates of a stored task, in another process or after a restart: the same channels, envelopes
 * (operation_id verbatim, `context` echoed) and A2A events as the call's own `context.updates`, starting from
 * `lastStatus`, the status the buyer last heard (nothing fires after a terminal one). A `context_id` stored in
 * `webhooks` rides on every MCP-shape envelope.
 */
export function resumeTaskUpdates(options: {
  task: AnyTask
  taskId: string
  webhooks: TaskWebhooks
  lastStatus: string
  sender: WebhookSender | undefined
}): TaskUpdates {
  return taskStream({
    task: options.task,
    taskId: options.taskId,
    context: options.webhooks.context,
    ...(options.webhooks.context_id !== undefined ? { contextId: options.webhooks.context_id } : {}),
    sender: options.sender,
    registrations: options.webhooks.registrations,
    initial: () => options.lastStatus,
  })
}
