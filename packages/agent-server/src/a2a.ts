import { Role, TaskState, type AgentCard, type Part, type Task } from '@a2a-js/sdk'
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server'
import {
  ExtensionSupportRequiredError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
} from '@a2a-js/sdk/errors'
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  ServerCallContext,
  validateVersion,
  type AgentExecutor,
  type PushNotificationSender,
} from '@a2a-js/sdk/server'
import { ADCP_A2A_EXTENSION } from '@adwire/agent-client'
import { readA2APush } from './a2a-push.js'
import { rawContext, type TaskCall, type TaskOutcome } from './core.js'
import { AgentError, failedTaskBody } from './errors.js'
import type { AnyTask, Principal, TaskCancelOutcome, TaskCancelRequest, VerifiedSigner } from './types.js'
import { webhookUrlProblem } from './webhook-urls.js'
import { rpcErrorResponse } from './rpc-answer.js'

/** The AdCP A2A profile extension (a2a-profile-extension.mdx), from `@adwire/agent-client`. */
export { ADCP_A2A_EXTENSION }
const AUTHORIZATION = 'adwire.authorization'
const SIGNER = 'adwire.signer'
/** The request's `params.configuration` as sent (before the SDK's parsing drops what it does not model). */
const CONFIGURATION = 'adwire.configuration'
/** Whether the request is on the AdCP 3.1 activated profile (A2A 1.0 with the AdCP extension activated). */
const PROFILE = 'adwire.profile'
/** The A2A version the request spoke (its pushes are shaped for the same version). */
const VERSION = 'adwire.a2a-version'

export interface A2AOptions {
  /** Reject requests that do not activate the AdCP extension (`A2A-Extensions` header). Default false. */
  readonly requireExtension?: boolean
  /**
   * `{skill, parameters}`, the field name earlier clients still send: `'outside-profile'` (the default)
   * accepts it unless the request is on the AdCP 3.1 activated profile (`A2A-Version: 1.0` with the AdCP
   * extension activated), where the profile says `parameters` is not an alias and the call answers
   * INVALID_REQUEST; `true` accepts it always, `false` never. `input` wins when both are present.
   */
  readonly acceptParameters?: boolean | 'outside-profile'
}

const dataPart = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
})

const textPart = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
})

/**
 * The AdCP task an A2A Task answered `submitted` or `working` (its artifact DataPart carries the `task_id`), if
 * any: the durable operation a CancelTask on that A2A Task cancels.
 */
function asyncHandle(task: Task): string | undefined {
  for (const artifact of task.artifacts)
    for (const part of artifact.parts) {
      if (part.content?.$case !== 'data') continue
      const data = part.content.value as Record<string, unknown> | undefined
      if ((data?.status === 'submitted' || data?.status === 'working') && typeof data.task_id === 'string')
        return data.task_id
    }
  return undefined
}

/** The A2A Task once its AdCP operation is canceled at the buyer's request (a text-only status message). */
function canceledTask(task: Task): Task {
  return {
    ...task,
    status: {
      state: TaskState.TASK_STATE_CANCELED,
      message: {
        messageId: crypto.randomUUID(),
        contextId: task.contextId,
        taskId: task.id,
        role: Role.ROLE_AGENT,
        parts: [textPart("canceled at the buyer's request")],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      timestamp: new Date().toISOString(),
    },
  }
}

/** Reads the one `{skill, input}` DataPart of an invocation (text parts are display-only and ignored). */
function readInvocation(
  parts: readonly Part[],
  acceptParameters: boolean,
): { skill: string; input: unknown } {
  const data = parts.filter((part) => part.content?.$case === 'data')
  if (data.length !== 1)
    throw new AgentError('INVALID_REQUEST', 'an AdCP invocation carries exactly one {skill, input} DataPart')
  const value = data[0]?.content?.value as Record<string, unknown> | undefined
  if (typeof value !== 'object' || value === null || typeof value.skill !== 'string')
    throw new AgentError('INVALID_REQUEST', 'the DataPart must be {skill, input}', { field: 'skill' })
  if (value.input === undefined && value.parameters !== undefined) {
    if (!acceptParameters)
      throw new AgentError(
        'INVALID_REQUEST',
        '`parameters` is not an alias of `input` on the activated AdCP profile: send {skill, input}',
        { field: 'parameters' },
      )
    return { skill: value.skill, input: value.parameters }
  }
  return { skill: value.skill, input: value.input ?? {} }
}

function finalTask(taskId: string, contextId: string, outcome: TaskOutcome): Task {
  const data = outcome.ok
    ? outcome.response
    : {
        ...failedTaskBody(outcome.error, outcome.context),
        ...(outcome.adcpVersion ? { adcp_version: outcome.adcpVersion } : {}),
      }
  const part = dataPart(data)
  return {
    id: taskId,
    contextId,
    status: {
      state: outcome.ok ? TaskState.TASK_STATE_COMPLETED : TaskState.TASK_STATE_FAILED,
      message: outcome.ok
        ? undefined
        : {
            messageId: crypto.randomUUID(),
            contextId,
            taskId,
            role: Role.ROLE_AGENT,
            parts: [part],
            metadata: undefined,
            extensions: [],
            referenceTaskIds: [],
          },
      timestamp: new Date().toISOString(),
    },
    artifacts: [
      {
        artifactId: crypto.randomUUID(),
        name: outcome.ok ? 'result' : 'error',
        description: '',
        parts: [part],
        metadata: outcome.ok && outcome.replayed ? { replayed: true } : undefined,
        extensions: [],
      },
    ],
    history: [],
    metadata: undefined,
  }
}

/** Serves the tasks over A2A JSON-RPC (1.0, and 0.3 when `A2A-Version` is absent or 0.3) with the official SDK. */
export function createA2AHandler(options: {
  card: AgentCard
  tasks: readonly AnyTask[]
  call: (call: TaskCall) => Promise<TaskOutcome>
  a2a: A2AOptions
  /** The webhook URL policy's development relaxation (http, local addresses) for A2A push registrations. */
  allowInsecureWebhookUrls?: boolean
  /** Authenticates a CancelTask caller (as a task call). */
  authenticate?: (authorization: string | null | undefined) => Promise<Principal | undefined>
  /** Cancels the AdCP task an A2A Task answered `submitted` or `working` (see AgentServerOptions.cancelTask). */
  cancelTask?: (request: TaskCancelRequest) => Promise<TaskCancelOutcome>
}): (request: Request, signer?: VerifiedSigner) => Promise<Response> {
  const allowInsecure = options.allowInsecureWebhookUrls === true
  const byName = new Map(options.tasks.map((task) => [task.name, task]))
  const executor: AgentExecutor = {
    async execute(requestContext, eventBus) {
      const { taskId, contextId } = requestContext
      let outcome: TaskOutcome
      let input: unknown
      try {
        const onProfile = requestContext.context.state.get(PROFILE) === true
        const accept = options.a2a.acceptParameters ?? 'outside-profile'
        const invocation = readInvocation(
          requestContext.userMessage.parts,
          accept === 'outside-profile' ? !onProfile : accept,
        )
        input = invocation.input
        const task = byName.get(invocation.skill)
        if (!task)
          throw new AgentError('INVALID_REQUEST', `unknown skill ${invocation.skill}`, { field: 'skill' })
        const a2aPush = readA2APush(
          requestContext.context.state.get(CONFIGURATION),
          requestContext.request.configuration?.taskPushNotificationConfig,
          allowInsecure,
        )
        const authorization = requestContext.context.state.get(AUTHORIZATION) as string | null
        const signer = requestContext.context.state.get(SIGNER) as VerifiedSigner | undefined
        outcome = await options.call({
          task,
          args: invocation.input,
          authorization,
          protocol: 'a2a',
          ...(signer ? { signer } : {}),
          // The A2A Task this message created, which the buyer holds: its contextId is the call's session, and
          // the A2A pushes name it (GetTask works).
          a2aTask: { id: taskId, contextId },
          ...(a2aPush
            ? { a2aPush, a2aVersion: requestContext.context.state.get(VERSION) as '0.3' | '1.0' }
            : {}),
        })
      } catch (error) {
        outcome = {
          ok: false,
          error: AgentError.is(error) ? error : new AgentError('INTERNAL_ERROR', 'failed'),
          context: rawContext(input),
        }
      }
      eventBus.publish(AgentEvent.task(finalTask(taskId, contextId, outcome)))
      eventBus.finished()
    },
    async cancelTask() {},
  }
  const store = new InMemoryTaskStore()
  const { authenticate, cancelTask } = options
  /** The caller of a CancelTask, or undefined (no credentials, or rejected ones: the task is then unknown). */
  const callerOf = async (context: ServerCallContext): Promise<Principal | undefined> => {
    try {
      return await authenticate?.(context.state.get(AUTHORIZATION) as string | null)
    } catch {
      return undefined
    }
  }
  // Pushes go through the @adwire/webhooks sender (signed, durable, per AdCP status); the SDK's own
  // sender would POST every A2A task event unsigned to the buyer's URL, which its receiver refuses.
  const noSdkPushes: PushNotificationSender = { send: async () => undefined }
  // The push-config methods (CreateTaskPushNotificationConfig, 0.3 tasks/pushNotificationConfig/set) register
  // a URL too: the same policy as at SendMessage, refused as invalid params.
  class PolicedRequestHandler extends DefaultRequestHandler {
    override async createTaskPushNotificationConfig(
      ...[params, context]: Parameters<DefaultRequestHandler['createTaskPushNotificationConfig']>
    ) {
      const problem = webhookUrlProblem(params.url, allowInsecure)
      if (problem) throw new RequestMalformedError(`taskPushNotificationConfig.url ${problem}`)
      return super.createTaskPushNotificationConfig(params, context)
    }

    /**
     * CancelTask (0.3 `tasks/cancel`) on a Task that answered an AdCP `submitted` or `working`: the invocation
     * completed, but the durable operation it handed back can still be canceled, so the call cancels that (the
     * `cancelTask` option decides) and the Task reads `TASK_STATE_CANCELED`. Any other Task: the SDK's answer.
     */
    override async cancelTask(...[params, context]: Parameters<DefaultRequestHandler['cancelTask']>) {
      const task = await store.load(params.id, context)
      const handle =
        task && task.status?.state !== TaskState.TASK_STATE_CANCELED ? asyncHandle(task) : undefined
      if (!task || handle === undefined || !cancelTask) return super.cancelTask(params, context)
      const outcome = await cancelTask({ taskId: handle, principal: await callerOf(context) })
      if (outcome === 'unknown') throw new TaskNotFoundError(`Task not found: ${params.id}`)
      if (outcome === 'terminal')
        throw new TaskNotCancelableError(
          `Task not cancelable: ${params.id} (its AdCP task ${handle} has ended)`,
        )
      const canceled = canceledTask(task)
      await store.save(canceled, context)
      return canceled
    }
  }
  const handler = new PolicedRequestHandler(options.card, store, executor, undefined, undefined, noSdkPushes)
  const current = new JsonRpcTransportHandler(handler)
  const legacy = new LegacyJsonRpcTransportHandler(handler)
  return async (request, signer) => {
    const version = request.headers.get('a2a-version') ?? undefined
    const useLegacy = version === undefined || version === '0.3'
    const extensions = (
      request.headers.get('a2a-extensions') ??
      request.headers.get('x-a2a-extensions') ??
      ''
    )
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean)
    const context = new ServerCallContext({
      requestedExtensions: extensions,
      ...(version ? { requestedVersion: version } : {}),
      state: new Map<string, unknown>([
        ['headers', Object.fromEntries(request.headers)],
        [AUTHORIZATION, request.headers.get('authorization')],
        [SIGNER, signer],
      ]),
    })
    let body: unknown
    try {
      body = await request.json()
    } catch {
      body = '{'
    }
    const params = (body as { params?: unknown } | null)?.params
    if (typeof params === 'object' && params !== null)
      context.state.set(CONFIGURATION, (params as { configuration?: unknown }).configuration)
    const headers = new Headers({ 'content-type': 'application/json' })
    const activated = extensions.includes(ADCP_A2A_EXTENSION)
    context.state.set(PROFILE, activated && !useLegacy)
    context.state.set(VERSION, useLegacy ? '0.3' : '1.0')
    if (activated) {
      context.addActivatedExtension(ADCP_A2A_EXTENSION)
      headers.set(useLegacy ? 'X-A2A-Extensions' : 'A2A-Extensions', ADCP_A2A_EXTENSION)
    }
    const id = (body as { id?: unknown } | null)?.id ?? null
    try {
      validateVersion(context.requestedVersion, options.card, 'JSONRPC')
      if (options.a2a.requireExtension && !activated)
        throw new ExtensionSupportRequiredError(
          `activate ${ADCP_A2A_EXTENSION} with the A2A-Extensions header`,
        )
    } catch (error) {
      const mapped = (useLegacy ? JsonRpcTransportHandler : JsonRpcTransportHandler).mapToJSONRPCError(error)
      return rpcErrorResponse(id, mapped, { status: 200, headers })
    }
    const result = await (useLegacy ? legacy : current).handle(body as Record<string, unknown>, context)
    if (typeof (result as AsyncGenerator)[Symbol.asyncIterator] === 'function') {
      return rpcErrorResponse(
        id,
        { code: -32004, message: 'streaming is not supported' },
        { status: 200, headers },
      )
    }
    return new Response(JSON.stringify(result), { status: 200, headers })
  }
}
