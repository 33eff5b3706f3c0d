/**
 * The creative agent's AdCP tasks, declared once for @adwire/agent-server (MCP tools and A2A skills):
 * get_adcp_capabilities, list_creative_formats and preview_creative are public; build_creative needs
 * `creatives:write`, is idempotent (durable replay by idempotency_key) and runs as an async task when the buyer
 * asks for it with `ext.adwire.async: true`.
 */
import { randomUUID } from 'node:crypto'
import {
  AgentError,
  assertWebhookUrl,
  defineTask,
  type AnyTask,
  type TaskContext,
} from '@adwire/agent-server'
import { FormatsError, listCreativeFormats, type FormatCatalog } from '@adwire/formats'
import { z } from 'zod'
import { buildCreative, checkBuildCreativeRequest } from './creative/build-creative.js'
import type { CreativeAgentRef, CreativeContext } from './creative/context.js'
import { CreativeError } from './creative/errors.js'
import { previewCreative } from './creative/preview-creative.js'
import type { PreviewSource, TaskPreviews } from './previews.js'

/** A structured log line. */
export type Log = (entry: Record<string, unknown>) => void

export interface TaskDeps {
  /** The agent's public base URL: format_id agent_url and preview URLs. */
  readonly publicUrl: string
  readonly catalog: FormatCatalog
  /** Where URL previews go: each task gets its own writer and awaits its writes before answering. */
  readonly previews: PreviewSource
  readonly creativeAgents?: readonly CreativeAgentRef[]
  /** The get_adcp_capabilities response (computed once). */
  readonly capabilities: Readonly<Record<string, unknown>>
  readonly allowInsecureWebhookUrls: boolean
  /** Runs an async build's work after its `submitted` answer; the service waits for it when closing. */
  readonly background: (work: () => Promise<void>) => void
  readonly log: Log
}

/**
 * A domain CreativeError, or a FormatsError from @adwire/formats, as the server's AgentError (same code, field,
 * recovery, HTTP status hint).
 */
export function toAgentError(thrown: unknown): unknown {
  const error = FormatsError.is(thrown) ? CreativeError.from(thrown) : thrown
  if (!CreativeError.is(error) || error.code === 'INTERNAL_ERROR') return error
  return new AgentError(error.code, error.message, {
    ...(error.field !== undefined ? { field: error.field } : {}),
    ...(error.details !== undefined ? { details: error.details } : {}),
    status: error.status,
    recovery: error.recovery,
    cause: error,
  })
}

/**
 * Waits until the preview pages a task stored are in the database, so any instance serves its URLs the moment
 * the buyer has them; when they cannot be stored the task fails (SERVICE_UNAVAILABLE, transient) instead of
 * answering with URLs that would not work.
 */
async function flushPreviews(previews: TaskPreviews, task: string, log: Log): Promise<void> {
  try {
    await previews.flush()
  } catch (error) {
    log({ task, previews: 'not stored', error: String(error) })
    throw new AgentError(
      'SERVICE_UNAVAILABLE',
      'the preview pages could not be stored, so their URLs would not be served; retry shortly',
      { recovery: 'transient', retryAfter: 5, cause: error },
    )
  }
}

/** Runs a domain handler; its CreativeErrors become AgentErrors. */
async function domain(run: () => Promise<object>): Promise<Record<string, unknown>> {
  try {
    return (await run()) as Record<string, unknown>
  } catch (error) {
    throw toAgentError(error)
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The buyer asked for an async build: `ext: { adwire: { async: true } }`. */
export function asyncRequested(input: Record<string, unknown>): boolean {
  const ext = input.ext
  return isObject(ext) && isObject(ext.adwire) && ext.adwire.async === true
}

const Response = z.looseObject({})

/**
 * @example
 * const tasks = creativeTasks({ publicUrl, catalog: standardCatalog(publicUrl), previews, capabilities, ... })
 * createAgentServer({ tasks, name: 'adwire-creative-agent', version: '1.0.0', url: publicUrl })
 */
export function creativeTasks(deps: TaskDeps): AnyTask[] {
  const contextAt = (now: Date, previews: TaskPreviews = deps.previews.forTask()): CreativeContext => ({
    agentUrl: deps.publicUrl,
    now,
    catalog: deps.catalog,
    previews,
    ...(deps.creativeAgents ? { creativeAgents: deps.creativeAgents } : {}),
  })

  /** Runs a handler that may store URL previews; answers only once they are stored. */
  async function withPreviews(
    task: string,
    now: Date,
    run: (context: CreativeContext) => Promise<object>,
  ): Promise<Record<string, unknown>> {
    const previews = deps.previews.forTask()
    const result = await domain(() => run(contextAt(now, previews)))
    await flushPreviews(previews, task, deps.log)
    return result
  }

  const getCapabilities = defineTask({
    name: 'get_adcp_capabilities',
    description:
      'Describes this creative agent: AdCP versions, protocols and specialisms, idempotency, webhook signing and identity.',
    input: z.looseObject({}),
    output: Response,
    access: 'public',
    handler: () => ({ ...deps.capabilities }),
  })

  const listFormats = defineTask({
    name: 'list_creative_formats',
    description:
      'Lists the standard creative formats this agent builds and previews (display, video, audio, DOOH), with every 3.1 filter and cursor pagination.',
    input: z.looseObject({}),
    output: Response,
    access: 'public',
    handler: (input, context) => domain(() => listCreativeFormats(input, contextAt(context.now))),
  })

  // Validation runs inside the input schema, so a malformed request is answered before the idempotency lookup
  // (never a replay or a conflict); errors thrown here reach the caller as they are.
  const buildInput = z
    .looseObject({
      idempotency_key: z.string().optional(),
      push_notification_config: z.unknown().optional(),
    })
    .superRefine((value) => {
      try {
        checkBuildCreativeRequest(value, contextAt(new Date()))
      } catch (error) {
        throw toAgentError(error)
      }
      const push = value.push_notification_config
      if (isObject(push) && typeof push.url === 'string')
        assertWebhookUrl(push.url, deps.allowInsecureWebhookUrls)
    })

  const build = defineTask({
    name: 'build_creative',
    description:
      'Builds a complete creative manifest for a target format: generated from a brief (creative_manifest.assets.promoted_offerings = {brand_manifest: {name, url, colors}, inline_offerings: [{name, description}]}) or transformed from a complete manifest in another format. Needs creatives:write; idempotent. Set ext.adwire.async = true to run it as an async task (submitted, then webhooks to push_notification_config).',
    input: buildInput,
    output: Response,
    access: { resource: 'creatives', permission: 'write' },
    idempotent: true,
    handler: async (input, context) => {
      if (!asyncRequested(input))
        return withPreviews('build_creative', context.now, (at) => buildCreative(input, at))
      const taskId = `build_${randomUUID()}`
      deps.background(() => runAsyncBuild(taskId, input, context))
      return {
        status: 'submitted' as const,
        task_id: taskId,
        message: 'build queued; status changes are pushed to push_notification_config',
      }
    },
  })

  async function runAsyncBuild(
    taskId: string,
    input: Record<string, unknown>,
    context: TaskContext,
  ): Promise<void> {
    const updates = context.updates(taskId)
    await updates.update('working', {
      percentage: 0,
      current_step: 'generating_assets',
      step_number: 1,
      total_steps: 2,
    })
    let result: Record<string, unknown>
    try {
      const previews = deps.previews.forTask()
      result = (await buildCreative(input, contextAt(new Date(), previews))) as unknown as Record<
        string,
        unknown
      >
      await flushPreviews(previews, 'build_creative', deps.log)
    } catch (thrown) {
      const error = AgentError.is(thrown) ? thrown : CreativeError.from(thrown)
      deps.log({ task: 'build_creative', task_id: taskId, failed: error.code })
      await updates.update('failed', { errors: [error.toAdcpError()] }, error.message)
      return
    }
    await updates.update('completed', result)
  }

  const preview = defineTask({
    name: 'preview_creative',
    description:
      'Renders previews of complete manifests, single or batch (up to 50), one per inputs variant with macros substituted, as URLs served at /previews/{id} until expires_at, or inline HTML.',
    input: z.looseObject({}),
    output: Response,
    access: 'public',
    handler: (input, context) =>
      withPreviews('preview_creative', context.now, (at) => previewCreative(input, at)),
  })

  return [getCapabilities, listFormats, build, preview]
}
