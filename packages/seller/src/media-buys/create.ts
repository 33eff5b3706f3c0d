/**
 * create_media_buy: the account, the flight, every package checked against the catalog; then either the buy
 * at once (its status from its creatives and flight; `confirmed_at` set) or, when the buyer gave a
 * push_notification_config and the buy needs the seller's review (BUY_REVIEW), a `submitted` task (with its
 * session, `context_id`) whose later statuses are pushed as the review runs: working, then completed, failed
 * (REVIEW_CREDIT_LIMIT) or input-required (a purchase order, REVIEW_PO_THRESHOLD: a create in the task's session
 * answers it, buyer-input.ts); the buyer may cancel it meanwhile (pending-buy.ts). A controller-forced submitted
 * arm answers with the forced task_id. The review is stored (the task with its registrations and the buy it
 * commits, and the due work), so whichever instance ticks once it is due finishes it, after a restart too.
 */
import { createHash } from 'node:crypto'
import { AgentError, type TaskContext } from '@adwire/agent-server'
import { assertUsable, requestSandbox, resolveAccount } from '../accounts/resolve.js'
import { creativesById } from '../creatives/lookup.js'
import { storeInlineCreatives } from '../creatives/library.js'
import { isoAt, isObject, newId, ownerOf, type Seller } from '../seller.js'
import { templateOf } from './actions.js'
import { resolveFlight } from './flight.js'
import { creativeImpairments, settledStatus } from './lifecycle.js'
import { buySandbox } from '../catalog/product-source.js'
import { packageFromRequest } from './packages.js'
import { assertReportingFrequency } from './reporting-frequency.js'
import { scheduleWork } from '../async/due-work.js'
import { moveTask, openTask, pushTaskStatus, TASK_KIND, type TaskRecord } from '../async/task-records.js'
import { answerReview, askForPurchaseOrder, awaitingTask, needsPurchaseOrder } from './buyer-input.js'
import { BUY_KIND } from './repository.js'
import { callPlatform } from '../platform.js'
import { setStatus } from './status.js'
import type { StoredRecord } from '../storage/index.js'
import type { MediaBuyRecord, PackageRecord } from './types.js'
import { createResponse } from './view.js'

/** Where a controller-forced create arm waits for the caller's next create_media_buy. */
export const FORCED_ARM_KIND = 'forced_create_arm'

/** The stored buy, ready to insert, from a validated request. */
async function buildBuy(
  seller: Seller,
  owner: string,
  request: Record<string, unknown>,
  mediaBuyId: string,
): Promise<MediaBuyRecord> {
  const now = seller.now()
  const account = await resolveAccount(seller, owner, request.account)
  assertUsable(account)
  const flight = resolveFlight(request.start_time, request.end_time, now)
  if (request.proposal_id !== undefined && !Array.isArray(request.packages))
    throw new AgentError('PROPOSAL_NOT_FOUND', `no proposal ${String(request.proposal_id)}`, {
      field: 'proposal_id',
      status: 404,
    })
  if (!Array.isArray(request.packages) || request.packages.length === 0)
    throw new AgentError('INVALID_REQUEST', 'packages must list at least one package', {
      field: 'packages',
      status: 400,
    })
  const packages: PackageRecord[] = []
  const products: Record<string, unknown>[] = []
  const currencies = new Set<string>()
  for (const [index, item] of request.packages.entries()) {
    const { pkg, currency, product } = await packageFromRequest(
      seller.products,
      item as Record<string, unknown>,
      `packages[${index}]`,
      account.sandbox ? owner : undefined,
    )
    packages.push(pkg)
    products.push(product)
    currencies.add(currency)
  }
  if (currencies.size > 1)
    throw new AgentError(
      'INVALID_REQUEST',
      `packages are priced in several currencies (${[...currencies].join(', ')})`,
      {
        field: 'packages',
        status: 400,
      },
    )
  assertReportingFrequency(request.reporting_webhook, products)
  const sum = packages.reduce((total, pkg) => total + pkg.budget, 0)
  const at = isoAt(now)
  const paused = request.paused === true
  return {
    media_buy_id: mediaBuyId,
    owner,
    account: isObject(request.account) ? request.account : {},
    account_id: account.account_id,
    sandbox: account.sandbox,
    status: 'pending_creatives',
    ...(isObject(request.brand) ? { brand: request.brand } : {}),
    currency: [...currencies][0]!,
    ...flight,
    created_at: at,
    updated_at: at,
    confirmed_at: at,
    total_budget:
      isObject(request.total_budget) && typeof request.total_budget.amount === 'number'
        ? request.total_budget.amount
        : sum,
    ...(typeof request.po_number === 'string' ? { po_number: request.po_number } : {}),
    packages,
    ...(isObject(request.context) ? { context: request.context } : {}),
    ...(isObject(request.push_notification_config)
      ? { push_notification_config: request.push_notification_config }
      : {}),
    ...(isObject(request.reporting_webhook) ? { reporting_webhook: request.reporting_webhook } : {}),
    ...(isObject(request.artifact_webhook) ? { artifact_webhook: request.artifact_webhook } : {}),
    impairments: [],
    history: [],
    serving: [],
    buyer_paused: paused,
    ...(templateOf(products) ? { allowed_actions: templateOf(products)! } : {}),
  }
}

/** Stores a built buy with its settled status; tells the event seam. Returns the create response. */
async function commitBuy(
  seller: Seller,
  buy: MediaBuyRecord,
  actor: string,
): Promise<Record<string, unknown>> {
  const now = seller.now()
  const creatives = await creativesById(
    seller.records,
    buy.owner,
    buy.packages.flatMap((pkg) => pkg.creative_assignments.map((a) => a.creative_id)),
  )
  setStatus(buy, settledStatus(buy, creatives, now), now, actor, 'created')
  buy.impairments = creativeImpairments(buy, creatives, now).impairments
  // The stored buy and what its creation announces commit together.
  return seller.records.transaction(async () => {
    if (!(await seller.records.insert(BUY_KIND, buy.media_buy_id, buy.owner, buy))) {
      // Committed already (a review resumed after a crash): the stored buy is the answer.
      const stored = await seller.records.get<MediaBuyRecord>(BUY_KIND, buy.media_buy_id)
      return createResponse(stored!.body, 1)
    }
    await seller.events.buyStatusChanged({ buy, from: undefined, to: buy.status, cause: 'buyer' })
    return createResponse(buy, 1)
  })
}

/**
 * Cancels in the ad server the order it booked for a reviewed buy the buyer canceled before it was stored
 * (outside any transaction). A failure is logged: the order is left for the ad server's operator.
 */
async function unbook(seller: Seller, taskId: string, buy: MediaBuyRecord): Promise<void> {
  const update = seller.platform.updateOrder
  if (!update) return
  const after: MediaBuyRecord = { ...buy, status: 'canceled' }
  try {
    await callPlatform(
      'cancel the media buy',
      () => update.call(seller.platform, { before: buy, after, action: 'cancel' }),
      seller.log,
    )
  } catch (error) {
    seller.log({ task_id: taskId, media_buy_id: buy.media_buy_id, unbook: 'failed', error: String(error) })
  }
}

/**
 * The id of what a create makes, derived from the caller and its idempotency key: a create the process died in
 * after storing its buy (or review) and before recording its answer makes the same id when the buyer retries, and
 * finds it done. Random without a key.
 */
function keyedId(prefix: string, owner: string, key: string, use: number): string {
  const seed = use === 0 ? `${owner}\n${key}` : `${owner}\n${key}\n${use}`
  return `${prefix}_${createHash('sha256').update(seed).digest('hex').slice(0, 20)}`
}

/** How many uses of one idempotency key (each after the replay window of the one before) a caller has. */
const MAX_KEY_USES = 10_000

/** Where a create stores its buy and review task, and what an earlier run under the same key stored there. */
interface CreateSlot {
  readonly buyId: string
  readonly taskId: string
  /** The answer of an earlier run of this create (within the replay window); undefined when none. */
  readonly done?: Record<string, unknown>
}

/**
 * The ids of a create: derived from the caller and its idempotency key, so that a create cut by a crash after
 * storing is found done on its retry, never carried out twice. A key used again after the replay window is a
 * new request (AdCP): its records are older than the window, so the next use of the key gets ids of its own.
 */
async function createSlot(seller: Seller, owner: string, key: unknown, session: string): Promise<CreateSlot> {
  if (typeof key !== 'string' || key === '') return { buyId: newId('mb'), taskId: newId('task') }
  const window = seller.replayTtlSeconds ?? 86_400
  for (let use = 0; use < MAX_KEY_USES; use++) {
    const buyId = keyedId('mb', owner, key, use)
    const taskId = keyedId('task', owner, key, use)
    const buy = await seller.records.get<MediaBuyRecord>(BUY_KIND, buyId)
    const task = await seller.records.get<TaskRecord>(TASK_KIND, taskId)
    if (!buy && !task) return { buyId, taskId }
    const mine = buy?.owner === owner ? buy : undefined
    const review = task?.owner === owner ? task : undefined
    const createdAt = Date.parse(mine?.body.created_at ?? review?.body.created_at ?? '') / 1000
    if (!(seller.now() - createdAt < window)) continue
    if (mine) return { buyId, taskId, done: createResponse(mine.body, 1) }
    if (review)
      return {
        buyId,
        taskId,
        done: {
          status: 'submitted',
          task_id: review.id,
          context_id: review.body.context_id ?? session,
          message: "The buy is in the seller's review; its outcome is pushed to push_notification_config.",
        },
      }
  }
  return { buyId: newId('mb'), taskId: newId('task') }
}

/** Books the buy in the ad server (outside any transaction). */
async function book(seller: Seller, buy: MediaBuyRecord): Promise<void> {
  const create = seller.platform.createOrder
  if (create) await callPlatform('book the media buy', () => create.call(seller.platform, buy), seller.log)
}

/**
 * Whether the buy waits for the seller's review (an IO signature): only when the buyer registered for pushes
 * (a push_notification_config, or an A2A push config), so it expects an async answer; and per BUY_REVIEW:
 * always, or (over_budget) above the threshold or with a guaranteed product.
 */
function needsReview(seller: Seller, context: TaskContext, total: number, guaranteed: boolean): boolean {
  if (context.webhooks.registrations.length === 0) return false
  if (seller.env.buyReview === 'always') return true
  return seller.env.buyReview === 'over_budget' && (total > seller.env.reviewBudgetThreshold || guaranteed)
}

/** The `working` push of a review. */
const REVIEW_PROGRESS = { percentage: 50, current_step: 'seller_review', step_number: 1, total_steps: 2 }

/** Thrown inside the booking's transaction when the buyer canceled the review first: nothing of it stays. */
class ReviewOvertaken extends Error {}

/**
 * Finishes a due review from where its task stands (the due tick calls it under the work's lease): `working`
 * pushed; the buy refused (`failed`, REVIEW_CREDIT_LIMIT), or waiting for the buyer's purchase order
 * (`input-required`, see buyer-input.ts; the buyer's answer makes the review due again), or committed with
 * `completed` and the create response pushed. Each step is stored before the next, so a resumed review repeats
 * none that is done; a task the buyer canceled meanwhile is left as it is, nothing booked.
 */
export async function finishBuyReview(seller: Seller, taskId: string): Promise<void> {
  // Each step commits with the pushes it causes: the task's move, the booked buy, the status push.
  await seller.records.transaction(async () => {
    await moveTask(seller, taskId, 'submitted', 'working')
    await pushTaskStatus(seller, taskId, REVIEW_PROGRESS)
  })
  const stored = await seller.records.get<TaskRecord>(TASK_KIND, taskId)
  const limit = seller.env.reviewCreditLimit
  if (stored?.body.status === 'working' && stored.body.pending_buy && limit !== undefined) {
    const pending = stored.body.pending_buy
    if (pending.total_budget > limit) {
      // The review refuses it: the task fails with the reason, and nothing is booked.
      await seller.records.transaction(async () => {
        await moveTask(seller, taskId, 'working', 'failed', {
          errors: [
            {
              code: 'BUDGET_EXCEEDED',
              message: `the seller's review refused the buy: its total budget ${pending.total_budget} ${pending.currency} is above the credit limit of ${limit} ${pending.currency}`,
              field: 'total_budget',
              recovery: 'correctable',
              details: { credit_limit: limit, total_budget: pending.total_budget },
            },
          ],
          ...(stored.body.context ? { context: stored.body.context } : {}),
        })
        await pushTaskStatus(seller, taskId)
      })
      return
    }
  }
  if (!stored) return
  // The review needs the buyer's purchase order first: the task waits for its answer (buyer-input.ts).
  if (
    stored.body.status === 'working' &&
    stored.body.pending_buy &&
    needsPurchaseOrder(seller, stored.body.pending_buy)
  )
    return seller.records.transaction(() => askForPurchaseOrder(seller, stored))
  await bookReviewedBuy(seller, stored)
}

/**
 * The review's last step, from the task as `stored` was read: the buy booked in the ad server before the
 * transaction that stores it (again after a crash: once per id there), then committed and the task `completed`
 * with the create response, pushed, in one transaction (a task completed already only has its push made). An
 * ad server that refuses the buy fails the task with its error; a transient failure leaves the review due
 * again. When the task moved since it was read (the buyer canceled it), the transaction rolls back: nothing is
 * stored, and an order the ad server booked for it meanwhile is canceled there.
 */
export async function bookReviewedBuy(seller: Seller, stored: StoredRecord<TaskRecord>): Promise<void> {
  const taskId = stored.id
  const approved =
    stored.body.status === 'working' && stored.body.pending_buy
      ? { ...stored.body.pending_buy, confirmed_at: isoAt(seller.now()) }
      : undefined
  let booked = false
  if (approved && !(await seller.records.get(BUY_KIND, approved.media_buy_id))) {
    try {
      await book(seller, approved)
      booked = true
    } catch (error) {
      if (!(error instanceof AgentError) || error.recovery === 'transient') throw error
      await seller.records.transaction(async () => {
        await moveTask(seller, taskId, 'working', 'failed', {
          errors: [{ code: error.code, message: error.message, recovery: error.recovery ?? 'terminal' }],
          ...(stored.body.context ? { context: stored.body.context } : {}),
        })
        await pushTaskStatus(seller, taskId)
      })
      return
    }
  }
  try {
    await seller.records.transaction(async () => {
      if (approved) {
        const response = await commitBuy(seller, approved, 'seller-review')
        // Canceled since it was read: the booking and what it announced roll back with this throw.
        if (!(await moveTask(seller, taskId, 'working', 'completed', response))) throw new ReviewOvertaken()
      }
      await pushTaskStatus(seller, taskId)
    })
  } catch (error) {
    if (!(error instanceof ReviewOvertaken)) throw error
    if (booked && approved) await unbook(seller, taskId, approved)
  }
}

/**
 * @example
 * await createMediaBuy(seller, request, context)
 */
export async function createMediaBuy(
  seller: Seller,
  request: Record<string, unknown>,
  context: TaskContext,
): Promise<Record<string, unknown>> {
  const owner = ownerOf(context)
  // A create in the session of a review waiting for this buyer's input is its answer (buyer-input.ts).
  const waiting =
    context.contextId === undefined ? undefined : await awaitingTask(seller, owner, context.contextId)
  if (waiting) return answerReview(seller, owner, waiting, request)
  // The session an async answer belongs to: the call's, else a new one (a follow-up in it answers the task).
  const session = context.contextId ?? newId('ctx')
  // A forced arm answers the caller's next create on a sandbox account only; a live create never sees it.
  const forced =
    (await requestSandbox(seller, owner, request.account)) === undefined
      ? undefined
      : await seller.records.get<{ arm: string; task_id?: string; message?: string }>(FORCED_ARM_KIND, owner)
  if (forced) await seller.records.delete(FORCED_ARM_KIND, owner)
  if (forced?.body.arm === 'submitted' && forced.body.task_id) {
    await openTask(seller, owner, {
      task_id: forced.body.task_id,
      task_type: 'create_media_buy',
      status: 'submitted',
      has_webhook: context.webhooks.registrations.length > 0,
      ...(isObject(request.context) ? { context: request.context } : {}),
      context_id: session,
      webhooks: context.webhooks,
      forced: true,
    })
    return {
      status: 'submitted',
      task_id: forced.body.task_id,
      context_id: session,
      message:
        forced.body.message ??
        'The buy awaits IO signature; the outcome is pushed to push_notification_config.',
    }
  }
  // Carried out already under this idempotency key (the process died before the answer was recorded): the
  // buy or the review it opened is the answer, never a second one.
  const slot = await createSlot(seller, owner, request.idempotency_key, session)
  if (slot.done) return slot.done
  await storeInlineCreatives(seller, owner, request)
  const buy = await buildBuy(seller, owner, request, slot.buyId)
  const products = await Promise.all(
    buy.packages.map((pkg) => seller.products.get(pkg.product_id, buySandbox(buy))),
  )
  const guaranteed = products.some((entry) => entry?.product.delivery_type === 'guaranteed')
  if (!needsReview(seller, context, buy.total_budget, guaranteed)) {
    await book(seller, buy)
    return commitBuy(seller, buy, owner)
  }
  const taskId = slot.taskId
  // The task and its review's due work are stored together: no review is lost to a crash between them.
  await seller.records.transaction(async () => {
    await openTask(seller, owner, {
      task_id: taskId,
      task_type: 'create_media_buy',
      status: 'submitted',
      has_webhook: true,
      ...(isObject(request.context) ? { context: request.context } : {}),
      context_id: session,
      webhooks: context.webhooks,
      pending_buy: buy,
    })
    await scheduleWork(seller, {
      work: 'buy_review',
      ref: taskId,
      owner,
      due_at: seller.now() + seller.env.reviewSeconds,
    })
  })
  return {
    status: 'submitted',
    task_id: taskId,
    context_id: session,
    message: `The buy (total ${buy.total_budget} ${buy.currency}) is in the seller's review; its outcome is pushed to push_notification_config.`,
  }
}
