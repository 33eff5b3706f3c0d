/**
 * The seller's async tasks (a buy in review, a controller-forced submitted arm) as records of kind `task`,
 * shared by every instance: get_task_status reads them, and each status change is written before it is pushed,
 * so a buyer without webhooks (or whose webhook failed) can poll. A task keeps its webhook registrations and
 * the last status the buyer was pushed, so any instance, or this one after a restart, pushes each later status
 * once (the status moves by compare-and-set: one caller wins each move).
 */
import { AgentError, type TaskContext, type TaskWebhooks } from '@adwire/agent-server'
import { WebhookError } from '@adwire/webhooks'
import type { MediaBuyRecord } from '../media-buys/types.js'
import { isObject, isoAt, ownerOf, type Seller } from '../seller.js'

export const TASK_KIND = 'task'

export interface TaskRecord {
  readonly task_id: string
  readonly task_type: string
  readonly protocol: string
  status: string
  readonly created_at: string
  updated_at: string
  completed_at?: string
  readonly has_webhook: boolean
  result?: Record<string, unknown>
  context?: Record<string, unknown>
  /** The AdCP session the task belongs to: a follow-up call in it answers the task's `input-required`. */
  readonly context_id?: string
  history: { status: string; at: string }[]
  /** Where its later statuses are pushed: the registrations of the call that opened it. */
  webhooks?: TaskWebhooks
  /** The last status whose webhooks are durably queued (the initial answer until a push). */
  pushed_status?: string
  /** A seller review: the buy it commits when it finishes. */
  pending_buy?: MediaBuyRecord
  /** Opened by the controller's forced submitted arm (force_task_completion finishes it). */
  forced?: boolean
}

/** What get_task_status never shows of a task. */
const INTERNAL = [
  'result',
  'history',
  'context',
  'webhooks',
  'pushed_status',
  'pending_buy',
  'forced',
] as const

/** Stores a new task in `status`. */
export async function openTask(
  seller: Seller,
  owner: string,
  task: {
    task_id: string
    task_type: string
    status: string
    has_webhook: boolean
    context?: Record<string, unknown>
    context_id?: string
    webhooks?: TaskWebhooks
    pending_buy?: MediaBuyRecord
    forced?: boolean
  },
): Promise<void> {
  const at = isoAt(seller.now())
  // The task's pushes go to a destination of its own: the attempts get_task_status lists are this task's alone,
  // whatever operation_id another caller chose for its own pushes.
  // Its MCP-shape pushes carry its session (`context_id`), the one a follow-up call answers it in.
  const webhooks = task.webhooks && {
    ...task.webhooks,
    ...(task.context_id !== undefined ? { context_id: task.context_id } : {}),
    registrations: task.webhooks.registrations.map((registration) => ({
      ...registration,
      destination: `task:${task.task_id}`,
    })),
  }
  const record: TaskRecord = {
    protocol: 'media-buy',
    created_at: at,
    updated_at: at,
    history: [{ status: task.status, at }],
    pushed_status: task.status,
    ...task,
    ...(webhooks ? { webhooks } : {}),
  }
  await seller.records.put(TASK_KIND, task.task_id, owner, record)
}

/**
 * Moves the task from `from` to `status` (with its result when terminal) by compare-and-set; resolves with
 * whether this caller moved it (false: it is gone or no longer in `from`).
 */
export async function moveTask(
  seller: Seller,
  taskId: string,
  from: string,
  status: string,
  result?: Record<string, unknown>,
): Promise<boolean> {
  for (;;) {
    const stored = await seller.records.get<TaskRecord>(TASK_KIND, taskId)
    if (!stored || stored.body.status !== from) return false
    const at = isoAt(seller.now())
    const { pending_buy: _done, ...rest } = stored.body
    const record: TaskRecord = {
      ...(status === 'completed' || status === 'failed' || status === 'canceled' ? rest : stored.body),
      status,
      updated_at: at,
      ...(status === 'completed' || status === 'failed' || status === 'canceled' ? { completed_at: at } : {}),
      ...(result ? { result } : {}),
      history: [...stored.body.history, { status, at }],
    }
    if (await seller.records.update(TASK_KIND, taskId, stored.revision, record)) return true
  }
}

/**
 * Pushes the task's status when the buyer has not been pushed it yet (a terminal status carries the stored
 * result, an interim one `interim`), through the stored registrations; then notes it as pushed. A push the
 * registration cannot carry (an MCP-shape push needs an operation_id) is logged and noted all the same.
 * Every channel's push and the note commit in one transaction.
 */
export async function pushTaskStatus(
  seller: Seller,
  taskId: string,
  interim?: Record<string, unknown>,
): Promise<void> {
  // The push and the note that it was made commit together: pushed once, never again under a new key.
  await seller.records.transaction(() => pushInTransaction(seller, taskId, interim))
}

async function pushInTransaction(
  seller: Seller,
  taskId: string,
  interim?: Record<string, unknown>,
): Promise<void> {
  const stored = await seller.records.get<TaskRecord>(TASK_KIND, taskId)
  if (!stored?.body.webhooks) return
  const { status, webhooks, result } = stored.body
  const pushed = stored.body.pushed_status ?? 'submitted'
  if (status === pushed) return
  try {
    const updates = seller.resumeUpdates(taskId, webhooks, pushed)
    await updates.update(status, status === 'submitted' || status === 'working' ? interim : result)
  } catch (error) {
    // A push the registration cannot carry is skipped for good; anything else (the outbox unreachable) is
    // thrown, so that the status stays unpushed and the work is tried again.
    if (!(error instanceof AgentError) && !(error instanceof WebhookError)) throw error
    seller.log({ task_id: taskId, push: status, skipped: String(error) })
  }
  for (;;) {
    const current = await seller.records.get<TaskRecord>(TASK_KIND, taskId)
    if (!current || current.body.pushed_status === status) return
    const record: TaskRecord = { ...current.body, pushed_status: status }
    if (await seller.records.update(TASK_KIND, taskId, current.revision, record)) return
  }
}

/** The outbox destination of a push registration (the sender's default: operation_id or config id, else the URL). */
function pushDestination(registration: TaskWebhooks['registrations'][number]): string {
  if (registration.destination !== undefined) return registration.destination
  const config = registration.config as { operation_id?: string; id?: string; url: string }
  return (registration.channel === 'adcp' ? config.operation_id : config.id) ?? config.url
}

/**
 * What get_task_status says of a task's outcome (protocol/get-task-status-response.json): a completed task's
 * response as `result` (with include_result), a failed one's error as `error`, and what a task waiting for the
 * buyer needs as `message`.
 */
function outcomeOf(
  status: string,
  result: Record<string, unknown> | undefined,
  includeResult: boolean,
): Record<string, unknown> {
  if (status === 'completed') return includeResult && result ? { result } : {}
  const first: unknown = Array.isArray(result?.errors) ? result.errors[0] : undefined
  if (!isObject(first)) return {}
  if (status === 'failed')
    return {
      error: {
        code: String(first.code),
        message: String(first.message),
        ...(isObject(first.details) ? { details: first.details } : {}),
      },
    }
  return status === 'input-required' ? { message: String(first.message) } : {}
}

/**
 * get_task_status: the caller's task (REFERENCE_NOT_FOUND otherwise) with its session (`context_id`), its
 * result with include_result once completed, its error once failed.
 *
 * @example
 * await getTaskStatus(seller, { task_id: 'task_1', include_result: true }, context)
 */
export async function getTaskStatus(
  seller: Seller,
  request: Record<string, unknown>,
  context: TaskContext,
): Promise<Record<string, unknown>> {
  const owner = ownerOf(context)
  const stored = await seller.records.get<TaskRecord>(TASK_KIND, String(request.task_id))
  if (!stored || stored.owner !== owner)
    throw new AgentError('REFERENCE_NOT_FOUND', `no task ${String(request.task_id)} for this caller`, {
      field: 'task_id',
      status: 404,
    })
  const { status, result, history } = stored.body
  const task: Record<string, unknown> = { ...stored.body }
  for (const field of INTERNAL) delete task[field]
  // Where the task's statuses were pushed, attempt by attempt: 3.1.19 has no field for it, so an extension.
  const destinations = (stored.body.webhooks?.registrations ?? []).map(pushDestination)
  const pushes = destinations.length > 0 ? await seller.events.taskPushActivity(destinations) : []
  return {
    ...task,
    ...(pushes.length > 0 ? { ext: { adwire: { task_push_activity: pushes } } } : {}),
    ...outcomeOf(status, result, request.include_result === true),
    ...(request.include_history === true
      ? {
          history: history.map((entry) => ({
            timestamp: entry.at,
            type: 'response',
            data: { status: entry.status },
          })),
        }
      : {}),
  }
}
