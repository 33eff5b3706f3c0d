/**
 * update_media_buy: pause, resume, cancel (the buy or a package), flight dates, budgets, pacing, bids,
 * targeting, creative assignments, new packages, and a new push_notification_config or reporting_webhook on the
 * existing buy (used from the next event on). Terminal buys refuse with INVALID_STATE (NOT_CANCELLABLE for a
 * second cancel); unknown packages are PACKAGE_NOT_FOUND; a stale `revision` is CONFLICT. A buy still in the
 * seller's review is named by its create's task_id and can only be canceled (pending-buy.ts).
 */
import { AgentError, type TaskContext } from '@adwire/agent-server'
import { creativesById } from '../creatives/lookup.js'
import { isoAt, isObject, ownerOf, type Seller } from '../seller.js'
import { resolveFlight } from './flight.js'
import { creativeImpairments, settledStatus } from './lifecycle.js'
import { buySandbox } from '../catalog/product-source.js'
import { packageFromRequest } from './packages.js'
import { assertReportingFrequency } from './reporting-frequency.js'
import { announce } from './reconcile.js'
import { pendingBuyTask, updatePendingBuy } from './pending-buy.js'
import { BUY_KIND, loadBuy, mutateBuy } from './repository.js'
import { effectiveAt, setStatus } from './status.js'
import { assertActionsAllowed, availableActionsOf, validActionsOf } from './actions.js'
import { callPlatform } from '../platform.js'
import { assertUpdatable } from './state-machine.js'
import type { MediaBuyRecord, MediaBuyStatus, PackageRecord } from './types.js'
import { packageView } from './view.js'

function applyPackageUpdate(pkg: PackageRecord, update: Record<string, unknown>): void {
  if (typeof update.budget === 'number') {
    if (!(update.budget > 0))
      throw new AgentError('VALIDATION_ERROR', 'budget must be above 0', {
        field: 'packages.budget',
        status: 400,
      })
    pkg.budget = update.budget
  }
  if (typeof update.pacing === 'string') pkg.pacing = update.pacing
  if (typeof update.bid_price === 'number') pkg.bid_price = update.bid_price
  if (typeof update.impressions === 'number') pkg.impressions = update.impressions
  if (typeof update.paused === 'boolean') pkg.paused = update.paused
  if (update.canceled === true) pkg.canceled = true
  if (isObject(update.targeting_overlay)) pkg.targeting_overlay = update.targeting_overlay
  if (isObject(update.context)) pkg.context = update.context
  if (Array.isArray(update.creative_assignments))
    pkg.creative_assignments = update.creative_assignments.filter(isObject).map((a) => ({
      creative_id: String(a.creative_id),
      ...(typeof a.weight === 'number' ? { weight: a.weight } : {}),
    }))
  if (Array.isArray(update.creatives))
    for (const creative of update.creatives.filter(isObject))
      if (!pkg.creative_assignments.some((a) => a.creative_id === creative.creative_id))
        pkg.creative_assignments.push({ creative_id: String(creative.creative_id) })
}

/** The buyer's pause or resume: the status it leads to from `status`. */
function pausedStatus(buy: MediaBuyRecord, paused: boolean): MediaBuyStatus {
  buy.buyer_paused = paused
  if (paused) return buy.status === 'active' || buy.status === 'pending_start' ? 'paused' : buy.status
  return buy.status === 'paused' ? 'active' : buy.status
}

/**
 * @example
 * await updateMediaBuy(seller, { media_buy_id: 'mb_1', paused: true, idempotency_key, account }, context)
 */
export async function updateMediaBuy(
  seller: Seller,
  request: Record<string, unknown>,
  context: TaskContext,
): Promise<Record<string, unknown>> {
  const owner = ownerOf(context)
  const mediaBuyId = String(request.media_buy_id)
  // No such buy: the id may be the task_id of a buy still in the seller's review (see pending-buy.ts).
  if (!(await seller.records.get(BUY_KIND, mediaBuyId))) {
    const pending = await pendingBuyTask(seller, owner, mediaBuyId)
    if (pending) return updatePendingBuy(seller, owner, pending, request)
  }
  const current = await loadBuy(seller.records, owner, mediaBuyId)
  assertUpdatable(current.body.status, mediaBuyId, request.canceled === true)
  assertActionsAllowed(current.body, request)
  if (typeof request.revision === 'number' && request.revision !== current.revision)
    throw new AgentError(
      'CONFLICT',
      `revision ${request.revision} is stale; the buy is at ${current.revision}`,
      {
        field: 'revision',
        status: 409,
        details: { current_revision: current.revision },
      },
    )
  // New packages are checked against the catalog before anything is stored.
  const added: PackageRecord[] = []
  const addedProducts: Record<string, unknown>[] = []
  if (Array.isArray(request.new_packages))
    for (const [index, item] of request.new_packages.entries()) {
      const { pkg, currency, product } = await packageFromRequest(
        seller.products,
        item as Record<string, unknown>,
        `new_packages[${index}]`,
        buySandbox(current.body),
      )
      if (currency !== current.body.currency)
        throw new AgentError(
          'INVALID_REQUEST',
          `new package priced in ${currency}, the buy in ${current.body.currency}`,
          {
            field: `new_packages[${index}].pricing_option_id`,
            status: 400,
          },
        )
      added.push(pkg)
      addedProducts.push(product)
    }
  if (isObject(request.reporting_webhook)) {
    const sandbox = buySandbox(current.body)
    const kept = await Promise.all(
      current.body.packages
        .filter((pkg) => !pkg.canceled)
        .map(async (pkg) => (await seller.products.get(pkg.product_id, sandbox))?.product ?? {}),
    )
    assertReportingFrequency(request.reporting_webhook, [...kept, ...addedProducts])
  }
  let before: MediaBuyStatus | undefined
  let raised: Record<string, unknown>[] = []
  const affected = new Set<string>()
  const change = async (draft: MediaBuyRecord) => {
    before = draft.status
    assertUpdatable(draft.status, mediaBuyId, request.canceled === true)
    const now = seller.now()
    const at = isoAt(now)
    if (request.canceled === true) {
      setStatus(draft, 'canceled', now, owner, 'canceled by the buyer')
      draft.cancellation = {
        canceled_at: at,
        canceled_by: 'buyer',
        ...(typeof request.cancellation_reason === 'string'
          ? { reason: request.cancellation_reason.slice(0, 500) }
          : {}),
      }
      return
    }
    if (request.start_time !== undefined || request.end_time !== undefined) {
      const flight = resolveFlight(
        request.start_time ?? draft.start_time,
        request.end_time ?? draft.end_time,
        now,
      )
      draft.start_time = request.start_time === undefined ? draft.start_time : flight.start_time
      draft.end_time = flight.end_time
    }
    if (Array.isArray(request.packages))
      for (const [index, update] of request.packages.filter(isObject).entries()) {
        const pkg = draft.packages.find((candidate) => candidate.package_id === update.package_id)
        if (!pkg)
          throw new AgentError(
            'PACKAGE_NOT_FOUND',
            `no package ${String(update.package_id)} in media buy ${mediaBuyId}`,
            {
              field: `packages[${index}].package_id`,
              status: 404,
            },
          )
        applyPackageUpdate(pkg, update)
        affected.add(pkg.package_id)
      }
    for (const pkg of added) {
      draft.packages.push(structuredClone(pkg))
      affected.add(pkg.package_id)
    }
    if (isObject(request.push_notification_config))
      draft.push_notification_config = request.push_notification_config
    if (isObject(request.reporting_webhook)) draft.reporting_webhook = request.reporting_webhook
    draft.total_budget = draft.packages
      .filter((pkg) => !pkg.canceled)
      .reduce((sum, pkg) => sum + pkg.budget, 0)
    if (typeof request.paused === 'boolean')
      setStatus(draft, pausedStatus(draft, request.paused), now, owner, request.paused ? 'paused' : 'resumed')
    const creatives = await creativesById(
      seller.records,
      owner,
      draft.packages.flatMap((pkg) => pkg.creative_assignments.map((a) => a.creative_id)),
    )
    const settled = settledStatus(draft, creatives, now)
    setStatus(draft, settled, effectiveAt(draft, settled, now), owner)
    const impairments = creativeImpairments(draft, creatives, now)
    draft.impairments = impairments.impairments
    raised = impairments.raised
    draft.updated_at = at
  }
  // The ad server applies the change first, outside any transaction: the buy as it will be stored, computed
  // once; the transaction stores exactly that, unless the buy changed meanwhile.
  const updateOrder = seller.platform.updateOrder
  let applied: MediaBuyRecord | undefined
  if (updateOrder) {
    const after = structuredClone(current.body)
    await change(after)
    applied = after
    const action =
      request.canceled === true
        ? 'cancel'
        : request.paused === true
          ? 'pause'
          : request.paused === false
            ? 'resume'
            : 'update'
    await callPlatform(
      'apply the change to the media buy',
      () => updateOrder.call(seller.platform, { before: current.body, after, action }),
      seller.log,
    )
  }
  // The changed buy and every push it causes commit together.
  const { buy, revision } = await seller.records.transaction(async () => {
    const changed = applied
      ? await storeApplied(seller, mediaBuyId, current.revision, applied)
      : await mutateBuy(seller.records, owner, mediaBuyId, change)
    await announce(seller, changed.buy, before, 'buyer', raised)
    // A reporting_webhook given now starts (or keeps) the buy's report schedule; its URL applies from the next fire.
    if (isObject(request.reporting_webhook)) await seller.events.deliveryAdvanced(changed.buy)
    return changed
  })
  return {
    media_buy_id: buy.media_buy_id,
    media_buy_status: buy.status,
    status: 'completed',
    revision,
    currency: buy.currency,
    total_budget: buy.total_budget,
    implementation_date: isoAt(seller.now()),
    affected_packages: buy.packages
      .filter((pkg) => affected.has(pkg.package_id) || request.canceled === true)
      .map((pkg) => packageView(pkg)),
    valid_actions: validActionsOf(buy),
    available_actions: availableActionsOf(buy),
    ...(buy.sandbox ? { sandbox: true } : {}),
  }
}

/** Stores the buy the ad server applied, over the revision it was computed from; CONFLICT when it moved since. */
async function storeApplied(
  seller: Seller,
  mediaBuyId: string,
  revision: number,
  buy: MediaBuyRecord,
): Promise<{ buy: MediaBuyRecord; revision: number }> {
  if (await seller.records.update(BUY_KIND, mediaBuyId, revision, buy)) return { buy, revision: revision + 1 }
  throw new AgentError('CONFLICT', `media buy ${mediaBuyId} changed meanwhile; read it and retry`, {
    status: 409,
    recovery: 'transient',
  })
}
