import type { TaskPushNotificationConfigInput, WebhookRegistration, WebhookSender } from '@adwire/webhooks'
import { AgentError } from './errors.js'
import type { AnyTask, Envelope, TaskUpdates } from './types.js'
import { parseOutput } from './validate.js'

/** Where the status pushes of one call go, decided by how the buyer registered. */
export function registrationFor(
  envelope: Envelope,
  a2aPush: TaskPushNotificationConfigInput | undefined,
): WebhookRegistration | undefined {
  const context = envelope.context
  if (envelope.push_notification_config)
    return {
      channel: 'adcp',
      config: envelope.push_notification_config,
      ...(context ? { context } : {}),
    }
  if (a2aPush) return { channel: 'a2a', config: a2aPush, ...(context ? { context } : {}) }
  return undefined
}

/**
 * Builds `context.updates` for one call. The webhook stream starts from the status the call answered
 * (`submitted` until the handler has returned), so an unchanged status sends nothing and a terminal initial
 * response never sends a webhook.
 */
export function createUpdates(options: {
  task: AnyTask
  envelope: Envelope
  sender: WebhookSender | undefined
  registration: WebhookRegistration | undefined
  initialStatus: (taskId: string) => string | undefined
}): (taskId: string) => TaskUpdates {
  const streams = new Map<string, ReturnType<WebhookSender['task']>>()
  return (taskId) => ({
    async update(status, result, message) {
      const initial = options.initialStatus(taskId) ?? 'submitted'
      if (initial !== 'submitted' && initial !== 'working')
        throw new AgentError('INVALID_STATE', `task ${taskId} answered ${initial}: it has no later updates`)
      let body = result
      if (status === 'completed' && result !== undefined) {
        body = parseOutput(options.task, result)
        if (options.envelope.context) body = { ...body, context: options.envelope.context }
      }
      const { sender, registration } = options
      if (!sender || !registration) return
      let stream = streams.get(taskId)
      if (!stream) {
        stream = sender.task(registration, { task_id: taskId, task_type: options.task.name, status: initial })
        streams.set(taskId, stream)
      }
      await stream.update(status, {
        ...(body !== undefined ? { result: body } : {}),
        ...(message !== undefined ? { message } : {}),
      })
    },
  })
}
