/**
 * The seller's async tasks (a buy in review, a controller-forced submitted arm) as records of kind `task`,
 * shared by every instance: get_task_status reads them, and each status change is written before it is pushed,
 * so a buyer without webhooks (or whose webhook failed) can poll.
 */
import { AgentError, type TaskContext } from '@adwire/agent-server'
import { isoAt, ownerOf, type Seller } from '../seller.js'

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
  history: { status: string; at: string }[]
}

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
  },
): Promise<void> {
  const at = isoAt(seller.now())
  const record: TaskRecord = {
    protocol: 'media-buy',
    created_at: at,
    updated_at: at,
    history: [{ status: task.status, at }],
    ...task,
  }
  await seller.records.put(TASK_KIND, task.task_id, owner, record)
}

/** Moves a task to `status` (with its result when completed). */
export async function moveTask(
  seller: Seller,
  taskId: string,
  status: string,
  result?: Record<string, unknown>,
): Promise<void> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const stored = await seller.records.get<TaskRecord>(TASK_KIND, taskId)
    if (!stored) return
    const at = isoAt(seller.now())
    const record: TaskRecord = {
      ...stored.body,
      status,
      updated_at: at,
      ...(status === 'completed' || status === 'failed' ? { completed_at: at } : {}),
      ...(result ? { result } : {}),
      history: [...stored.body.history, { status, at }],
    }
    if (await seller.records.update(TASK_KIND, taskId, stored.revision, record)) return
  }
}

/**
 * get_task_status: the caller's task (REFERENCE_NOT_FOUND otherwise), its result with include_result.
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
  const { result, history, context: _taskContext, ...task } = stored.body
  return {
    ...task,
    ...(request.include_result === true && result ? { result } : {}),
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
