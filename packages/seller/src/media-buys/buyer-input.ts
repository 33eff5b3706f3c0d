/**
 * A review that needs the buyer (`input-required`, media-buy/create-media-buy-async-response-input-required.json):
 * with `reviewPoThreshold` set, the review of a buy above it whose request carried no `po_number` asks for one.
 * Its task moves to `input-required` (reason APPROVAL_REQUIRED, a VALIDATION_ERROR on `po_number`, the buyer's
 * context), pushed to its registrations. The buyer answers as task-lifecycle.mdx says, with a follow-up in the
 * task's session: a create_media_buy carrying the task's `context_id` (over A2A, a message in the same contextId,
 * the profile's continuation: a complete request again) and `po_number`. The answer puts the number on the buy
 * under review, moves the task to `working` (pushed) and makes the review due at once: it books the buy and
 * pushes `completed`. Only the purchase order is read from the follow-up; the buy is the one first submitted.
 */
import { AgentError } from '@adwire/agent-server'
import { scheduleWork } from '../async/due-work.js'
import { moveTask, pushTaskStatus, TASK_KIND, type TaskRecord } from '../async/task-records.js'
import type { Seller } from '../seller.js'
import type { StoredRecord } from '../storage/index.js'
import type { MediaBuyRecord } from './types.js'

/** Which task waits for its buyer's input in a session: `[owner, context_id]` → `{ task_id }`. */
export const AWAITING_KIND = 'task_awaiting_input'

/** The record id of a caller's session. */
export const sessionKey = (owner: string, contextId: string) => JSON.stringify([owner, contextId])

/** The `working` push of a review that has the buyer's answer. */
const RESUMED = { percentage: 75, current_step: 'purchase_order_received', step_number: 2, total_steps: 2 }

/**
 * Whether the review must ask the buyer for a purchase order before it books `buy`.
 *
 * @example
 * needsPurchaseOrder(seller, buy) // true: total_budget 60000 above a threshold of 50000, no po_number
 */
export function needsPurchaseOrder(seller: Seller, buy: MediaBuyRecord): boolean {
  const threshold = seller.env.reviewPoThreshold
  return threshold !== undefined && buy.total_budget > threshold && (buy.po_number ?? '').trim() === ''
}

/**
 * Moves a task under review (`working`) to `input-required` for its purchase order, notes the session it waits
 * in, and pushes the status with what is needed; in the caller's transaction. Nothing when the task moved on.
 */
export async function askForPurchaseOrder(seller: Seller, stored: StoredRecord<TaskRecord>): Promise<void> {
  const { pending_buy: buy, context, context_id: contextId } = stored.body
  if (!buy) return
  const threshold = seller.env.reviewPoThreshold ?? 0
  const where = contextId === undefined ? '' : ` in session ${contextId}`
  const result = {
    reason: 'APPROVAL_REQUIRED',
    errors: [
      {
        code: 'VALIDATION_ERROR',
        message: `the seller's review needs a purchase order number for a buy above ${threshold} ${buy.currency} (this one: ${buy.total_budget}): answer with create_media_buy${where} carrying po_number`,
        field: 'po_number',
        recovery: 'correctable',
        details: { po_threshold: threshold, total_budget: buy.total_budget },
      },
    ],
    ...(context ? { context } : {}),
  }
  if (!(await moveTask(seller, stored.id, 'working', 'input-required', result))) return
  if (contextId !== undefined)
    await seller.records.put(AWAITING_KIND, sessionKey(stored.owner, contextId), stored.owner, {
      task_id: stored.id,
    })
  await pushTaskStatus(seller, stored.id)
}

/** The caller's task waiting for its input in session `contextId`, if any. */
export async function awaitingTask(
  seller: Seller,
  owner: string,
  contextId: string,
): Promise<StoredRecord<TaskRecord> | undefined> {
  const noted = await seller.records.get<{ task_id: string }>(AWAITING_KIND, sessionKey(owner, contextId))
  if (!noted || noted.owner !== owner) return undefined
  const task = await seller.records.get<TaskRecord>(TASK_KIND, noted.body.task_id)
  const waits =
    task?.owner === owner && task.body.status === 'input-required' && task.body.context_id === contextId
  return waits ? task : undefined
}

/**
 * The buyer's answer to a review waiting for its purchase order (`waiting`, found by {@link awaitingTask}): the
 * number on the buy under review, the task `working` (pushed) and the review due now, in one transaction.
 * Answers `submitted` with the task's id and session (the outcome is pushed, and read through
 * get_task_status); VALIDATION_ERROR when the follow-up carries no `po_number`, INVALID_STATE when the task
 * stopped waiting meanwhile (canceled).
 *
 * @example
 * await answerReview(seller, owner, waiting, { ...request, po_number: 'PO-4711' })
 */
export async function answerReview(
  seller: Seller,
  owner: string,
  waiting: StoredRecord<TaskRecord>,
  request: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const taskId = waiting.id
  const poNumber = typeof request.po_number === 'string' ? request.po_number.trim() : ''
  if (poNumber === '')
    throw new AgentError(
      'VALIDATION_ERROR',
      `task ${taskId} waits for a purchase order number: send po_number`,
      {
        field: 'po_number',
        status: 400,
        details: { task_id: taskId },
      },
    )
  const contextId = waiting.body.context_id!
  await seller.records.transaction(async () => {
    for (;;) {
      const stored = await seller.records.get<TaskRecord>(TASK_KIND, taskId)
      if (stored?.body.status !== 'input-required' || !stored.body.pending_buy)
        throw new AgentError('INVALID_STATE', `task ${taskId} no longer waits for input`, {
          status: 409,
          details: { task_id: taskId, current_status: stored?.body.status },
        })
      const pending = { ...stored.body.pending_buy, po_number: poNumber }
      const record: TaskRecord = { ...stored.body, pending_buy: pending }
      if (await seller.records.update(TASK_KIND, taskId, stored.revision, record)) break
    }
    await moveTask(seller, taskId, 'input-required', 'working')
    await pushTaskStatus(seller, taskId, RESUMED)
    await seller.records.delete(AWAITING_KIND, sessionKey(owner, contextId))
    await scheduleWork(seller, { work: 'buy_review', ref: taskId, owner, due_at: seller.now() })
  })
  return {
    status: 'submitted',
    task_id: taskId,
    context_id: contextId,
    message: `The review resumes with purchase order ${poNumber}; its outcome is pushed to push_notification_config.`,
  }
}
