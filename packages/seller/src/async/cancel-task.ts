/**
 * The buyer cancels one of its async tasks (a buy in the seller's review, a controller-forced submitted arm):
 * through update_media_buy `canceled: true` on the pending buy (media-buys/pending-buy.ts) or A2A CancelTask on
 * the Task that answered it. A task still `submitted`, `working` or `input-required` moves to `canceled` by
 * compare-and-set, so exactly one of the cancel and the review finishing it wins; the move, its push to every
 * registration (once: the push is noted with it), and the removal of the review's due work commit together.
 * The review books nothing after a cancel (media-buys/create.ts checks its move before it commits).
 */
import type { TaskCancelOutcome, TaskCancelRequest } from '@adwire/agent-server'
import { AWAITING_KIND, sessionKey } from '../media-buys/buyer-input.js'
import type { Seller } from '../seller.js'
import { DUE_KIND } from './due-work.js'
import { moveTask, pushTaskStatus, TASK_KIND, type TaskRecord } from './task-records.js'

/** The statuses a task can be canceled from (enums/task-status.json: the non-terminal ones it takes). */
const CANCELABLE: ReadonlySet<string> = new Set(['submitted', 'working', 'input-required'])

/** A cancel's end: `canceled` now, or not, the task as it had ended (`canceled` before, `completed`, `failed`). */
export interface CancelResult {
  readonly canceled: boolean
  readonly task: TaskRecord
}

/**
 * Cancels the caller's task `taskId`; undefined when the caller has no such task. A canceled push carries the
 * buyer's context only (what an earlier `input-required` asked for no longer applies).
 *
 * @example
 * const result = await cancelTask(seller, 'buyer-1', 'task_abc')
 * if (result?.canceled) console.log('canceled, nothing booked')
 */
export async function cancelTask(
  seller: Seller,
  owner: string,
  taskId: string,
): Promise<CancelResult | undefined> {
  return seller.records.transaction(async () => {
    for (;;) {
      const stored = await seller.records.get<TaskRecord>(TASK_KIND, taskId)
      if (!stored || stored.owner !== owner) return undefined
      const { status, context, context_id: contextId } = stored.body
      if (!CANCELABLE.has(status)) return { canceled: false, task: stored.body }
      // Another caller moved it first (the review, the buyer's answer): look again.
      if (!(await moveTask(seller, taskId, status, 'canceled', { ...(context ? { context } : {}) }))) continue
      await pushTaskStatus(seller, taskId)
      await seller.records.delete(DUE_KIND, `buy_review:${taskId}`)
      if (contextId !== undefined) {
        const key = sessionKey(owner, contextId)
        const noted = await seller.records.get<{ task_id: string }>(AWAITING_KIND, key)
        if (noted?.body.task_id === taskId) await seller.records.delete(AWAITING_KIND, key)
      }
      const task = (await seller.records.get<TaskRecord>(TASK_KIND, taskId))!.body
      return { canceled: true, task }
    }
  })
}

/**
 * The A2A CancelTask of agent-server (`cancelTask` option): as update_media_buy's cancel, the caller's own task
 * and `media_buys:delete`; a caller without either reads the task as unknown.
 *
 * @example
 * createAgentServer({ ..., cancelTask: (request) => cancelForCaller(seller, request) })
 */
export async function cancelForCaller(
  seller: Seller,
  request: TaskCancelRequest,
): Promise<TaskCancelOutcome> {
  const { principal } = request
  if (!principal?.permissions.media_buys?.includes('delete')) return 'unknown'
  const result = await cancelTask(seller, principal.principal_id, request.taskId)
  if (!result) return 'unknown'
  return result.canceled || result.task.status === 'canceled' ? 'canceled' : 'terminal'
}
