import type { WebhookSender } from '@adwire/webhooks'
import { createA2AHandler, type A2AOptions } from './a2a.js'
import { agentCardJson, agentCardModel, type AgentCardOptions } from './a2a-card.js'
import { createAuthenticator, type AuthOptions } from './auth.js'
import { createCore } from './core.js'
import type { AgentError } from './errors.js'
import { checkIdempotencyOptions, type IdempotencyOptions } from './idempotency.js'
import { createHttpAuthGate } from './http-auth.js'
import { createMcpHandler } from './mcp.js'
import { createOAuthRegistration, type OAuthRegistrationOptions } from './oauth.js'
import { checkRequestSignature, type RequestSigningOptions } from './request-signing.js'
import type {
  AnyTask,
  TaskCancelOutcome,
  TaskCancelRequest,
  TaskUpdates,
  TaskWebhooks,
  VerifiedSigner,
} from './types.js'
import { resumeTaskUpdates } from './updates.js'

export interface AgentServerOptions {
  readonly tasks: readonly AnyTask[]
  readonly name: string
  readonly version: string
  readonly description?: string
  /** The public base URL: MCP at `{url}/mcp`, A2A at `{url}/a2a`, routes matched under its path. */
  readonly url: string
  readonly auth?: AuthOptions
  /**
   * Required by tasks declared `idempotent` (they answer INVALID_REQUEST without a key either way). Checked
   * here: a `replayTtlSeconds` outside 3600 to 604,800 throws a RangeError.
   */
  readonly idempotency?: IdempotencyOptions
  /** Pushes status changes of async tasks (`context.updates`). Without it updates are validated and dropped. */
  readonly sender?: WebhookSender
  /** Reject a push_notification_config without operation_id (INVALID_REQUEST). Default true. */
  readonly requireOperationId?: boolean
  /**
   * Relax the webhook URL policy that A2A push registrations (`taskPushNotificationConfig` at SendMessage and
   * through the push-config methods) must pass, as tasks check `push_notification_config` with
   * `assertWebhookUrl`: http and loopback/private addresses for local development. Userinfo stays refused.
   * Default false: https on a public address.
   */
  readonly allowInsecureWebhookUrls?: boolean
  readonly a2a?: A2AOptions
  /**
   * Cancels an AdCP async task when the buyer cancels the A2A Task that answered it `submitted` or `working`
   * (A2A `CancelTask`, 0.3 `tasks/cancel`; the caller authenticated as for a task call): resolve `canceled` once
   * the task is canceled (and its `canceled` status pushed to its registrations), `terminal` when it had ended
   * otherwise (the call answers TaskNotCancelableError), `unknown` when the caller has no such task
   * (TaskNotFoundError). The A2A Task then reads `TASK_STATE_CANCELED` with a text status message. Without it,
   * such a Task is not cancelable (its invocation completed). A2A Tasks live in this instance's memory.
   */
  readonly cancelTask?: (request: TaskCancelRequest) => Promise<TaskCancelOutcome>
  /**
   * Verify RFC 9421 request signatures on every call (the AdCP request profile): signed calls name their
   * signer in `context.verifiedSigner`; bad signatures, and unsigned calls to `capability.required_for`
   * operations without another accepted credential, are refused. Advertise the same `capability` as
   * `request_signing` in get_adcp_capabilities.
   */
  readonly requestSigning?: RequestSigningOptions
  /** Serve `POST /oauth/register` (RFC 7591). */
  readonly oauth?: OAuthRegistrationOptions
  /** Unix seconds. Default the system clock. */
  readonly now?: () => number
  /** Called for every failed call (for logs and metrics). */
  readonly onError?: (error: AgentError, task: string) => void
  /**
   * The AdCP release the agent serves, echoed as `adcp_version` on every response (the 3.1 version envelope).
   * Default `'3.1'`; `false` sends none.
   */
  readonly adcpVersion?: string | false
}

export interface AgentServer {
  /** Answers one HTTP request (web-standard), for any runtime or framework. */
  fetch(request: Request): Promise<Response>
  /**
   * The status pushes of a stored async task (its `context.webhooks`, stored when it answered), from another
   * instance or after a restart: the same channels and envelopes as the call's `context.updates`, starting from
   * `lastStatus`, the last status the buyer heard (nothing fires after a terminal one). Throws a TypeError for
   * a task name this server does not declare.
   */
  resumeUpdates(taskId: string, webhooks: TaskWebhooks, lastStatus: string): TaskUpdates
}

/**
 * The AdCP task server: the tasks over MCP streamable HTTP (`/mcp`) and A2A JSON-RPC (`/a2a`), the agent card
 * at `/.well-known/agent-card.json` and `/.well-known/agent.json`, optional OAuth client registration.
 *
 * @example
 * const server = createAgentServer({ tasks: [listThings], name: 'demo', version: '1.0.0', url: 'http://127.0.0.1:4200' })
 * app.all('*', (c) => server.fetch(c.req.raw)) // hono; or serve({ fetch: server.fetch }) from @hono/node-server
 */
export function createAgentServer(options: AgentServerOptions): AgentServer {
  const names = new Set<string>()
  for (const task of options.tasks) {
    if (names.has(task.name)) throw new TypeError(`duplicate task ${task.name}`)
    names.add(task.name)
  }
  if (options.idempotency) checkIdempotencyOptions(options.idempotency)
  const now = options.now ?? (() => Date.now() / 1000)
  const authenticate = createAuthenticator(options.auth, now)
  const refuseInvalidOnPublicTasks = options.auth?.refuseInvalidOnPublicTasks === true
  const call = createCore({
    authenticate,
    refuseInvalidOnPublicTasks,
    ...(options.idempotency ? { idempotency: options.idempotency } : {}),
    ...(options.sender ? { sender: options.sender } : {}),
    ...(options.onError ? { onError: options.onError } : {}),
    requireOperationId: options.requireOperationId ?? true,
    now,
    ...(options.adcpVersion === false ? {} : { adcpVersion: options.adcpVersion ?? '3.1' }),
  })
  const cardOptions: AgentCardOptions = {
    name: options.name,
    description: options.description ?? options.name,
    version: options.version,
    url: options.url,
    tasks: options.tasks,
    pushNotifications: options.sender !== undefined,
    requireExtension: options.a2a?.requireExtension ?? false,
    bearer: options.auth?.tokens !== undefined || options.auth?.jwt !== undefined,
  }
  const card = agentCardModel(cardOptions)
  const gate = createHttpAuthGate({
    tasks: options.tasks,
    authenticate,
    url: options.url,
    refuseInvalidOnPublicTasks,
    ...(options.auth?.resourceMetadataUrl ? { resourceMetadataUrl: options.auth.resourceMetadataUrl } : {}),
  })
  const mcp = createMcpHandler({ name: options.name, version: options.version, tasks: options.tasks, call })
  const a2a = createA2AHandler({
    card,
    tasks: options.tasks,
    call,
    a2a: options.a2a ?? {},
    allowInsecureWebhookUrls: options.allowInsecureWebhookUrls === true,
    authenticate,
    ...(options.cancelTask ? { cancelTask: options.cancelTask } : {}),
  })
  const register = options.oauth ? createOAuthRegistration(options.oauth, now) : undefined
  const base = new URL(options.url).pathname.replace(/\/$/, '')
  const cardBody = JSON.stringify(agentCardJson(cardOptions))
  const { requestSigning } = options
  /** Whether the request's bearer credential authenticates (composition: it may stand in for a signature). */
  const credentialHolds = async (request: Request) => {
    try {
      return (await authenticate(request.headers.get('authorization'))) !== undefined
    } catch {
      return false
    }
  }
  /** Runs `handle` after the request-signature check, when one is configured. */
  const signed = async (
    request: Request,
    handle: (request: Request, signer?: VerifiedSigner) => Promise<Response>,
    transport: 'mcp' | 'a2a',
  ): Promise<Response> => {
    let signer: VerifiedSigner | undefined
    if (requestSigning && request.method === 'POST') {
      const check = await checkRequestSignature(request, requestSigning, {
        hasOtherCredential: await credentialHolds(request),
        now: now(),
        transport,
      })
      if (!check.ok) return check.response
      signer = check.signer
    }
    // Credentials are checked at the HTTP layer, before any task code runs (401 / 403).
    const refused = await gate(request, transport)
    if (refused) return refused
    return signer ? handle(request, signer) : handle(request)
  }
  const serveCard = () =>
    new Response(cardBody, {
      headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' },
    })
  return {
    resumeUpdates(taskId, webhooks, lastStatus) {
      const task = options.tasks.find((candidate) => candidate.name === webhooks.task)
      if (!task) throw new TypeError(`no task ${webhooks.task} is declared`)
      return resumeTaskUpdates({ task, taskId, webhooks, lastStatus, sender: options.sender })
    },
    async fetch(request) {
      const path = new URL(request.url).pathname
      const route = path.startsWith(base) ? path.slice(base.length) : undefined
      switch (route) {
        case '/mcp':
          return signed(request, mcp, 'mcp')
        case '/a2a':
          return request.method === 'POST'
            ? signed(request, a2a, 'a2a')
            : new Response(null, { status: 405, headers: { allow: 'POST' } })
        // The card at the root, and next to the A2A endpoint for clients given the `/a2a` URL.
        case '/.well-known/agent-card.json':
        case '/.well-known/agent.json':
        case '/a2a/.well-known/agent-card.json':
        case '/a2a/.well-known/agent.json':
          return serveCard()
        case '/oauth/register':
          if (register) return register(request)
      }
      return Response.json({ error: 'not_found' }, { status: 404 })
    },
  }
}
