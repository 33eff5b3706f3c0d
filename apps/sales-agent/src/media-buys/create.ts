/**
 * create_media_buy: the account, the flight, every package checked against the catalog; then either the buy
 * at once (its status from its creatives and flight; `confirmed_at` set) or, when the buyer gave a
 * push_notification_config and the buy needs the seller's review (BUY_REVIEW), a `submitted` task whose
 * working and completed statuses are pushed as the review runs. A controller-forced submitted arm answers with
 * the forced task_id.
 */
import { AgentError, type TaskContext, type TaskUpdates } from '@adwire/agent-server'
import { assertUsable, resolveAccount } from '../accounts/resolve.js'
import { creativesById } from '../creatives/lookup.js'
import { storeInlineCreatives } from '../creatives/library.js'
import { isoAt, isObject, newId, ownerOf, type Seller } from '../seller.js'
import { templateOf } from './actions.js'
import { resolveFlight } from './flight.js'
import { creativeImpairments, settledStatus } from './lifecycle.js'
import { packageFromRequest } from './packages.js'
import { moveTask, openTask } from '../async/task-records.js'
import { BUY_KIND } from './repository.js'
import { setStatus } from './status.js'
import type { MediaBuyRecord, PackageRecord } from './types.js'
import { createResponse } from './view.js'

/** Where a controller-forced create arm waits for the caller's next create_media_buy. */
export const FORCED_ARM_KIND = 'forced_create_arm'

/** The stored buy, ready to insert, from a validated request. */
async function buildBuy(
  seller: Seller,
  owner: string,
  request: Record<string, unknown>,
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
  const sum = packages.reduce((total, pkg) => total + pkg.budget, 0)
  const at = isoAt(now)
  const paused = request.paused === true
  return {
    media_buy_id: newId('mb'),
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
  await seller.records.insert(BUY_KIND, buy.media_buy_id, buy.owner, buy)
  await seller.events.buyStatusChanged({ buy, from: undefined, to: buy.status, cause: 'buyer' })
  return createResponse(buy, 1)
}

/**
 * Whether the buy waits for the seller's review (an IO signature): only when the buyer registered a
 * push_notification_config (so it expects an async answer), and per BUY_REVIEW: always, or (over_budget) above
 * the threshold or with a guaranteed product.
 */
function needsReview(
  seller: Seller,
  request: Record<string, unknown>,
  total: number,
  guaranteed: boolean,
): boolean {
  if (!isObject(request.push_notification_config)) return false
  if (seller.env.buyReview === 'always') return true
  return seller.env.buyReview === 'over_budget' && (total > seller.env.reviewBudgetThreshold || guaranteed)
}

/** Pushes a status when the registration can carry it (an MCP-shape push needs an operation_id); else logs. */
async function push(
  seller: Seller,
  updates: TaskUpdates,
  taskId: string,
  status: string,
  result: Record<string, unknown>,
) {
  try {
    await updates.update(status, result)
  } catch (error) {
    seller.log({ task_id: taskId, push: status, skipped: String(error) })
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
  const forced = await seller.records.get<{ arm: string; task_id?: string; message?: string }>(
    FORCED_ARM_KIND,
    owner,
  )
  if (forced) await seller.records.delete(FORCED_ARM_KIND, owner)
  if (forced?.body.arm === 'submitted' && forced.body.task_id) {
    seller.forcedTasks.set(forced.body.task_id, context.updates(forced.body.task_id))
    await openTask(seller, owner, {
      task_id: forced.body.task_id,
      task_type: 'create_media_buy',
      status: 'submitted',
      has_webhook: isObject(request.push_notification_config),
      ...(isObject(request.context) ? { context: request.context } : {}),
    })
    return {
      status: 'submitted',
      task_id: forced.body.task_id,
      message:
        forced.body.message ??
        'The buy awaits IO signature; the outcome is pushed to push_notification_config.',
    }
  }
  await storeInlineCreatives(seller, owner, request)
  const buy = await buildBuy(seller, owner, request)
  const products = await Promise.all(buy.packages.map((pkg) => seller.products.get(pkg.product_id)))
  const guaranteed = products.some((entry) => entry?.product.delivery_type === 'guaranteed')
  if (!needsReview(seller, request, buy.total_budget, guaranteed)) return commitBuy(seller, buy, owner)
  const taskId = newId('task')
  const updates = context.updates(taskId)
  await openTask(seller, owner, {
    task_id: taskId,
    task_type: 'create_media_buy',
    status: 'submitted',
    has_webhook: true,
  })
  seller.background(async () => {
    await new Promise((resolve) => setTimeout(resolve, seller.env.reviewSeconds * 1000))
    await moveTask(seller, taskId, 'working')
    await push(seller, updates, taskId, 'working', {
      percentage: 50,
      current_step: 'seller_review',
      step_number: 1,
      total_steps: 2,
    })
    const response = await commitBuy(seller, { ...buy, confirmed_at: isoAt(seller.now()) }, 'seller-review')
    await moveTask(seller, taskId, 'completed', response)
    await push(seller, updates, taskId, 'completed', response)
  })
  return {
    status: 'submitted',
    task_id: taskId,
    message: `The buy (total ${buy.total_budget} ${buy.currency}) is in the seller's review; its outcome is pushed to push_notification_config.`,
  }
}
