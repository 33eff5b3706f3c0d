/**
 * update_media_buy on a buy still in the seller's review. create_media_buy answered `submitted` with a task_id
 * and no media_buy_id (create-media-buy-response.json: the id lands on the completion artifact), so the task_id
 * is the one handle the buyer holds on the pending buy, and `media_buy_id` takes it. `canceled: true` cancels
 * it (the review is canceled: its task ends `canceled`, pushed once, and nothing is ever booked) and answers
 * the buy `canceled`. As for a booked buy (state-machine.yaml), a second cancel is NOT_CANCELLABLE; so is a
 * review that ended otherwise (refused: nothing to cancel; completed: the buy has its own media_buy_id now,
 * named in the error's details); any other change is INVALID_STATE until the buy is booked.
 */
import { AgentError } from '@adwire/agent-server'
import { cancelTask } from '../async/cancel-task.js'
import { TASK_KIND, type TaskRecord } from '../async/task-records.js'
import { isoAt, type Seller } from '../seller.js'
import type { StoredRecord } from '../storage/index.js'

/** The caller's create_media_buy task `id` names, if it names one (an async create's task_id). */
export async function pendingBuyTask(
  seller: Seller,
  owner: string,
  id: string,
): Promise<StoredRecord<TaskRecord> | undefined> {
  const task = await seller.records.get<TaskRecord>(TASK_KIND, id)
  return task?.owner === owner && task.body.task_type === 'create_media_buy' ? task : undefined
}

/** NOT_CANCELLABLE for a review that ended before the cancel. */
function notCancellable(id: string, task: TaskRecord): AgentError {
  const booked = task.status === 'completed' ? task.result?.media_buy_id : undefined
  return new AgentError(
    'NOT_CANCELLABLE',
    typeof booked === 'string'
      ? `the review of ${id} has booked the buy as ${booked}: cancel ${booked}`
      : `the buy of ${id} is ${task.status === 'failed' ? 'refused by the review' : 'already canceled'}; it cannot be canceled`,
    {
      field: 'canceled',
      status: 409,
      details: { task_status: task.status, ...(typeof booked === 'string' ? { media_buy_id: booked } : {}) },
    },
  )
}

/**
 * Applies update_media_buy to the pending buy of `task` (see the file comment).
 *
 * @example
 * await updatePendingBuy(seller, owner, task, { media_buy_id: 'task_abc', canceled: true })
 */
export async function updatePendingBuy(
  seller: Seller,
  owner: string,
  task: StoredRecord<TaskRecord>,
  request: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const id = task.id
  if (request.canceled !== true)
    throw new AgentError(
      'INVALID_STATE',
      `the buy of ${id} is in the seller's review (task ${task.body.status}): only canceled: true applies until it is booked`,
      { field: 'media_buy_id', status: 409, details: { task_status: task.body.status } },
    )
  const buy = task.body.pending_buy
  const result = await cancelTask(seller, owner, id)
  if (!result?.canceled) throw notCancellable(id, result?.task ?? task.body)
  return {
    status: 'completed',
    media_buy_id: id,
    media_buy_status: 'canceled',
    revision: 1,
    ...(buy ? { currency: buy.currency, total_budget: buy.total_budget } : {}),
    implementation_date: isoAt(seller.now()),
    affected_packages: [],
    valid_actions: [],
    available_actions: [],
    ...(buy?.sandbox ? { sandbox: true } : {}),
  }
}
