import type { AdcpProtocol } from '@adwire/schemas'
import type { WebhookRegistration } from '@adwire/webhooks'
import type { z } from 'zod'

export type { AdcpProtocol }

/** What a protected task touches. */
export type Resource = 'products' | 'media_buys' | 'creatives' | 'reports'
/** What it does to it. */
export type Permission = 'read' | 'write' | 'delete' | 'approve'

/** An authenticated caller: who, and what each resource allows it. */
export interface Principal {
  readonly principal_id: string
  readonly permissions: Readonly<Partial<Record<Resource, readonly Permission[]>>>
}

/** `'public'` (no credentials needed), or the permission a caller must hold. */
export type Access = 'public' | { readonly resource: Resource; readonly permission: Permission }

/** An AdCP `push_notification_config` as received (extra members kept). */
export interface PushNotificationConfig {
  readonly url: string
  readonly operation_id?: string
  readonly token?: string
  readonly authentication?: { readonly schemes: readonly string[]; readonly credentials: string }
  readonly [key: string]: unknown
}

/** The AdCP envelope fields accepted on every task, whatever its input schema. */
export interface Envelope {
  readonly idempotency_key?: string
  readonly context?: Readonly<Record<string, unknown>>
  readonly context_id?: string
  readonly push_notification_config?: PushNotificationConfig
  readonly governance_context?: unknown
  readonly adcp_major_version?: number
  readonly adcp_version?: string
}

/** Pushes status changes of one async task to the caller's registration (a no-op without one). */
export interface TaskUpdates {
  /**
   * Sends a webhook when `status` differs from the last one (`working`, `completed`, `failed`, ...). For
   * `completed`, `result` is validated against the task's output schema and gets the request's `context`.
   */
  update(status: string, result?: Readonly<Record<string, unknown>>, message?: string): Promise<void>
}

/**
 * Where the later status pushes of a task go, as plain JSON: the registrations of the call (the MCP
 * `push_notification_config`, the A2A push config), the request's `context` and the task name. Store it with
 * an async task so that another instance, or this one after a restart, pushes its later statuses
 * (`AgentServer.resumeUpdates`).
 */
export interface TaskWebhooks {
  /** The task's name (`create_media_buy`). */
  readonly task: string
  readonly registrations: readonly WebhookRegistration[]
  readonly context?: Readonly<Record<string, unknown>>
  /** The AdCP session the task belongs to (`context_id`), sent as `context_id` in its MCP-shape envelopes. */
  readonly context_id?: string
}

/** What a handler is given beside its input. */
/** Who signed a request whose RFC 9421 signature verified (security.mdx: recorded after step 14). */
export interface VerifiedSigner {
  readonly keyid: string
  /** The `agents[].url` whose keys verified the signature, when the key source names one (never a body field). */
  readonly agent_url?: string
  /** Unix seconds. */
  readonly verified_at: number
}

export interface TaskContext {
  /** The authenticated caller; undefined on a public task called without credentials. */
  readonly principal: Principal | undefined
  /** Set when the request carried a verified RFC 9421 signature (`createAgentServer({ requestSigning })`). */
  readonly verifiedSigner?: VerifiedSigner
  readonly envelope: Envelope
  /** The transport the call arrived on. */
  readonly protocol: 'mcp' | 'a2a'
  /** The server clock at the start of the call. */
  readonly now: Date
  /** Status pushes for a task this call answered `submitted` or `working`. */
  updates(taskId: string): TaskUpdates
  /** This call's push registrations as plain JSON, to store with an async task (empty without any). */
  readonly webhooks: TaskWebhooks
  /**
   * The AdCP session the call continues (`context_id`, core/protocol-envelope.json): the request's `context_id`,
   * else over A2A the message's `contextId` (A2A carries the session itself); undefined on an MCP call without
   * one. A buyer answers a task waiting in `input-required` with a new call in the same session.
   */
  readonly contextId?: string
}

/** A buyer's cancel of an AdCP async task through the transport: A2A `CancelTask` on the Task that answered it. */
export interface TaskCancelRequest {
  /** The AdCP `task_id` of the `submitted` or `working` answer the A2A Task carries. */
  readonly taskId: string
  /** The caller, authenticated as for a task call; undefined without (or with rejected) credentials. */
  readonly principal: Principal | undefined
}

/**
 * How a cancel ended: `canceled` (the task is canceled, now or before; its implementation pushes the status),
 * `terminal` (it had ended otherwise first: completed, failed), `unknown` (no such task for this caller).
 */
export type TaskCancelOutcome = 'canceled' | 'terminal' | 'unknown'

/** A handler's async answer: the task continues, and pushes its progress through `context.updates(task_id)`. */
export interface AsyncTaskResponse {
  readonly status: 'submitted' | 'working'
  readonly task_id: string
  readonly message?: string
  readonly [key: string]: unknown
}

export interface TaskDefinitionInput<I extends z.ZodType, O extends z.ZodType> {
  /** The AdCP task name: the MCP tool name and the A2A skill id. */
  readonly name: string
  readonly description: string
  readonly input: I
  readonly output: O
  readonly access: Access
  /** Requires `idempotency_key` and replays responses from the idempotency store. */
  readonly idempotent?: boolean
  /**
   * The AdCP protocol the task belongs to (`enums/adcp-protocol.json`), sent as `protocol` in its webhook
   * envelopes. Default: known from the task name for AdCP's own tasks (`build_creative` → `creative`,
   * `create_media_buy` → `media-buy`, ...), else none.
   */
  readonly protocol?: AdcpProtocol
  /**
   * The request shape advertised as the MCP tool's `inputSchema`. Default: the official 3.1.19 request schema
   * of an AdCP task name from `@adwire/schemas` (`build_creative` → `BuildCreativeRequestSchema`), else `input`.
   * Validation always uses `input`.
   */
  readonly requestSchema?: z.ZodType
  /**
   * The MCP tool's `inputSchema` as JSON Schema, for a request no zod schema describes (an official JSON Schema
   * file, its `$ref`s resolved or dropped): wins over `requestSchema`. Its root `properties` must name every
   * request field: clients such as the official AdCP client strip arguments the tool does not declare.
   */
  readonly requestJsonSchema?: Readonly<Record<string, unknown>>
  /**
   * The response shape advertised as the MCP tool's `outputSchema` (beside the failed-task body). Default: the
   * official response schema of an AdCP task name, else `output`.
   */
  readonly responseSchema?: z.ZodType
  /** MCP tool annotations; default from `access` and `idempotent` (see README). */
  readonly annotations?: ToolAnnotations
  handler(
    input: z.output<I>,
    context: TaskContext,
  ): Promise<z.input<O> | AsyncTaskResponse> | z.input<O> | AsyncTaskResponse
}

/** MCP tool annotations (hints to clients; MCP 2025-06-18). */
export interface ToolAnnotations {
  readonly title?: string
  readonly readOnlyHint?: boolean
  readonly destructiveHint?: boolean
  readonly idempotentHint?: boolean
  readonly openWorldHint?: boolean
}

/** A declared task (see {@link defineTask}). */
export interface TaskDefinition<
  I extends z.ZodType = z.ZodType,
  O extends z.ZodType = z.ZodType,
> extends TaskDefinitionInput<I, O> {
  readonly idempotent: boolean
  readonly protocol: AdcpProtocol | undefined
}

/** Any task, for lists. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTask = TaskDefinition<any, any>
