import {
  refuseBearerForMutatingTask,
  type TaskPushNotificationConfigInput,
  type WebhookSender,
} from '@adwire/webhooks'
import { authorize } from './auth.js'
import { AgentError, toAgentError } from './errors.js'
import { requestFingerprint, runIdempotent, type IdempotencyOptions } from './idempotency.js'
import type { AnyTask, AsyncTaskResponse, Principal, TaskContext, VerifiedSigner } from './types.js'
import { createUpdates, registrationsFor, taskWebhooks } from './updates.js'
import { parseArguments, parseOutput } from './validate.js'

/** One task call, transport-independent. */
export interface TaskCall {
  readonly task: AnyTask
  readonly args: unknown
  /** The `Authorization` header, if any. */
  readonly authorization: string | null | undefined
  readonly protocol: 'mcp' | 'a2a'
  /** An A2A TaskPushNotificationConfig sent with the message, if any. */
  readonly a2aPush?: TaskPushNotificationConfigInput
  /** The A2A version the message was sent in: the A2A pushes take its shape. */
  readonly a2aVersion?: '0.3' | '1.0'
  /**
   * The A2A Task the message created, which the buyer holds: the A2A pushes carry its id and contextId, and its
   * contextId is the call's session (`TaskContext.contextId`) when the input names no `context_id`.
   */
  readonly a2aTask?: { readonly id: string; readonly contextId: string }
  /** The verified signer of the request, when it was signed. */
  readonly signer?: VerifiedSigner
}

export type TaskOutcome =
  | { readonly ok: true; readonly response: Record<string, unknown>; readonly replayed: boolean }
  | {
      readonly ok: false
      readonly error: AgentError
      readonly context: Readonly<Record<string, unknown>> | undefined
      /** The AdCP release served, echoed as `adcp_version` in the failed-task body. */
      readonly adcpVersion?: string
    }

export interface CoreOptions {
  readonly authenticate: (authorization: string | null | undefined) => Promise<Principal | undefined>
  /** A rejected bearer on a public task is AUTH_INVALID too (see AuthOptions.refuseInvalidOnPublicTasks). */
  readonly refuseInvalidOnPublicTasks?: boolean
  readonly idempotency?: IdempotencyOptions
  readonly sender?: WebhookSender
  readonly requireOperationId: boolean
  readonly now: () => number
  readonly onError?: (error: AgentError, task: string) => void
  /** The AdCP release served, echoed as `adcp_version` on every response (version-envelope). */
  readonly adcpVersion?: string
}

function isAsync(value: unknown): value is AsyncTaskResponse {
  if (typeof value !== 'object' || value === null) return false
  const record = value as Record<string, unknown>
  return (record.status === 'submitted' || record.status === 'working') && typeof record.task_id === 'string'
}

export function rawContext(args: unknown): Readonly<Record<string, unknown>> | undefined {
  if (typeof args !== 'object' || args === null) return undefined
  const context = (args as Record<string, unknown>).context
  return typeof context === 'object' && context !== null && !Array.isArray(context)
    ? (context as Record<string, unknown>)
    : undefined
}

/** The session a call continues: its `context_id`, else the A2A message's `contextId`. */
function sessionOf(envelope: TaskContext['envelope'], call: TaskCall): string | undefined {
  if (envelope.context_id !== undefined && envelope.context_id !== '') return envelope.context_id
  return call.a2aTask?.contextId || undefined
}

/**
 * Legacy Bearer gives a webhook no body integrity: refused for a mutating task when the request arrives, so
 * that the buyer hears it in the response rather than through webhooks that never come.
 */
function refuseBearerNow(registration: ReturnType<typeof registrationsFor>[number], taskName: string): void {
  try {
    refuseBearerForMutatingTask(registration.config.authentication as never, taskName)
  } catch (error) {
    const field =
      registration.channel === 'adcp'
        ? 'push_notification_config.authentication'
        : 'configuration.taskPushNotificationConfig.authentication'
    throw new AgentError('INVALID_REQUEST', (error as Error).message, { field })
  }
}

/** Creates the dispatcher every transport calls: auth, validation, idempotency, handler, context echo. */
export function createCore(options: CoreOptions): (call: TaskCall) => Promise<TaskOutcome> {
  const initialStatuses = new Map<string, string>()
  return async (call) => {
    const { task } = call
    try {
      let principal: Principal | undefined
      try {
        principal = await options.authenticate(call.authorization)
      } catch (error) {
        // A public task serves anyone: a present but unknown or expired token does not break it.
        if (task.access !== 'public' || options.refuseInvalidOnPublicTasks) throw error
        principal = undefined
      }
      authorize(task.access, principal, task.name)
      const { envelope, input } = parseArguments(task, call.args)
      if (
        options.requireOperationId &&
        envelope.push_notification_config &&
        !envelope.push_notification_config.operation_id
      )
        throw new AgentError('INVALID_REQUEST', 'push_notification_config requires operation_id', {
          field: 'push_notification_config.operation_id',
        })
      const registrations = registrationsFor(envelope, call.a2aPush, call.a2aVersion, call.a2aTask)
      for (const registration of registrations) refuseBearerNow(registration, task.name)
      const nowSeconds = options.now()
      const session = sessionOf(envelope, call)
      const context: TaskContext = {
        principal,
        ...(call.signer ? { verifiedSigner: call.signer } : {}),
        envelope,
        protocol: call.protocol,
        now: new Date(nowSeconds * 1000),
        updates: createUpdates({
          task,
          envelope,
          sender: options.sender,
          registrations,
          initialStatus: (taskId) => initialStatuses.get(taskId),
        }),
        webhooks: taskWebhooks(task, envelope, registrations),
        ...(session !== undefined ? { contextId: session } : {}),
      }
      const execute = async (): Promise<Record<string, unknown>> => {
        const raw: unknown = await task.handler(input, context)
        if (isAsync(raw)) {
          initialStatuses.set(raw.task_id, raw.status)
          return { ...raw }
        }
        const output = parseOutput(task, raw)
        const status = typeof output.task_id === 'string' ? output.status : undefined
        if (typeof status === 'string') initialStatuses.set(output.task_id as string, status)
        return output
      }
      let response: Record<string, unknown>
      let replayed = false
      if (task.idempotent && options.idempotency) {
        const key = envelope.idempotency_key
        if (key === undefined)
          throw new AgentError('INVALID_REQUEST', `${task.name} requires idempotency_key`, {
            field: 'idempotency_key',
          })
        const result = await runIdempotent(
          options.idempotency,
          {
            scope: principal?.principal_id ?? '',
            key,
            fingerprint: requestFingerprint(task.name, call.args as Record<string, unknown>),
            now: nowSeconds,
          },
          execute,
        )
        response = result.response
        replayed = result.replayed
      } else {
        if (task.idempotent && envelope.idempotency_key === undefined)
          throw new AgentError('INVALID_REQUEST', `${task.name} requires idempotency_key`, {
            field: 'idempotency_key',
          })
        response = await execute()
      }
      const echoed = {
        ...(options.adcpVersion ? { adcp_version: options.adcpVersion } : {}),
        ...response,
        ...(envelope.context ? { context: envelope.context } : {}),
        ...(replayed ? { replayed: true } : {}),
      }
      return { ok: true, response: echoed, replayed }
    } catch (thrown) {
      const error = toAgentError(thrown)
      options.onError?.(error, task.name)
      return {
        ok: false,
        error,
        context: rawContext(call.args),
        ...(options.adcpVersion ? { adcpVersion: options.adcpVersion } : {}),
      }
    }
  }
}
