/**
 * The seller's creative library: sync_creatives (upsert per creative, per-creative action and status, dry
 * runs, strict or lenient validation, bulk assignments to packages) and the inline creatives a
 * create_media_buy package may carry. Approval: a creative in a format this seller's creative agent knows (or
 * one of the seller's products lists) is approved at once (CREATIVE_REVIEW=auto) or after the seller's review
 * (CREATIVE_REVIEW=manual); a format it does not know waits in pending_review. Every status change reaches the
 * event seam and the buys using it.
 */
import { standardCatalog } from '@adwire/formats'
import { AgentError } from '@adwire/agent-server'
import { scheduleWork } from '../async/due-work.js'
import { reconcileBuys } from '../media-buys/reconcile.js'
import { BUY_KIND, mutateBuy } from '../media-buys/repository.js'
import type { MediaBuyRecord } from '../media-buys/types.js'
import { callPlatform } from '../platform.js'
import { isoAt, isObject, type Seller } from '../seller.js'
import { CREATIVE_KIND, creativeKey } from './lookup.js'
import type { CreativeRecord, CreativeStatus } from './types.js'

/**
 * The first status of a creative in this format: a format of the creative agent's catalog, or one a product of
 * this seller lists (seeded products reference formats of their own; the caller's sandbox seeds count for its own
 * creatives), is one the seller reviews as configured.
 */
async function initialStatus(
  seller: Seller,
  owner: string,
  formatId: Record<string, unknown>,
): Promise<CreativeStatus> {
  const wanted = { agent_url: String(formatId.agent_url), id: String(formatId.id) }
  const catalog = standardCatalog(seller.env.creativeAgentUrl)
  const known =
    catalog.get(wanted) !== undefined ||
    (await seller.products.all(owner)).some(
      ({ product }) =>
        Array.isArray(product.format_ids) &&
        product.format_ids.some(
          (listed) => isObject(listed) && listed.id === wanted.id && listed.agent_url === wanted.agent_url,
        ),
    )
  if (!known) return 'pending_review'
  return seller.env.creativeReview === 'manual' ? 'pending_review' : 'approved'
}

/** Stores one creative (insert or update); resolves with the action taken and the stored record. */
export async function upsertCreative(
  seller: Seller,
  owner: string,
  input: Record<string, unknown>,
  accountId?: string,
): Promise<{ action: 'created' | 'updated' | 'unchanged'; creative: CreativeRecord; from?: CreativeStatus }> {
  const id = String(input.creative_id)
  const key = creativeKey(owner, id)
  const at = isoAt(seller.now())
  const existing = await seller.records.get<CreativeRecord>(CREATIVE_KIND, key)
  const formatId = isObject(input.format_id) ? input.format_id : (existing?.body.format_id ?? {})
  const base = {
    name: typeof input.name === 'string' ? input.name : existing?.body.name,
    format_id: formatId,
    assets: isObject(input.assets) ? input.assets : existing?.body.assets,
    ...(Array.isArray(input.tags) ? { tags: input.tags as string[] } : {}),
  }
  if (existing && !existing.body.purged_at) {
    const same = JSON.stringify({ ...existing.body, ...base }) === JSON.stringify(existing.body)
    if (same) return { action: 'unchanged', creative: existing.body }
    const creative: CreativeRecord = { ...existing.body, ...base, updated_at: at }
    await seller.records.put(CREATIVE_KIND, key, owner, creative)
    return { action: 'updated', creative, from: existing.body.status }
  }
  const creative: CreativeRecord = {
    creative_id: id,
    owner,
    ...(accountId ? { account_id: accountId } : {}),
    ...base,
    status: await initialStatus(seller, owner, formatId),
    created_at: at,
    updated_at: at,
  }
  await seller.records.put(CREATIVE_KIND, key, owner, creative)
  return { action: 'created', creative }
}

/** Changes a creative's status; tells the event seam and settles the buys using it. */
export async function setCreativeStatus(
  seller: Seller,
  owner: string,
  creativeId: string,
  status: CreativeStatus,
  reason?: string,
): Promise<CreativeRecord> {
  // The status, the buys it settles and every push announcing them commit together.
  return seller.records.transaction(() => storeCreativeStatus(seller, owner, creativeId, status, reason))
}

async function storeCreativeStatus(
  seller: Seller,
  owner: string,
  creativeId: string,
  status: CreativeStatus,
  reason?: string,
): Promise<CreativeRecord> {
  const key = creativeKey(owner, creativeId)
  const stored = await seller.records.get<CreativeRecord>(CREATIVE_KIND, key)
  if (!stored)
    throw new AgentError('CREATIVE_NOT_FOUND', `no creative ${creativeId}`, {
      field: 'creative_id',
      status: 404,
    })
  const creative: CreativeRecord = {
    ...stored.body,
    status,
    updated_at: isoAt(seller.now()),
    ...(reason ? { rejection_reason: reason } : {}),
  }
  await seller.records.put(CREATIVE_KIND, key, owner, creative)
  if (stored.body.status !== status) {
    await seller.events.creativeStatusChanged(creative, stored.body.status)
    await reconcileBuys(seller, owner, new Set([creativeId]))
  }
  return creative
}

/**
 * Schedules the seller's review of a pending creative (approved after REVIEW_SECONDS): stored due work, so
 * the review finishes on whichever instance ticks once it is due, after a restart too.
 */
export async function scheduleReview(seller: Seller, owner: string, creative: CreativeRecord): Promise<void> {
  if (creative.status !== 'pending_review' || seller.env.creativeReview !== 'manual') return
  await scheduleWork(seller, {
    work: 'creative_review',
    ref: creative.creative_id,
    owner,
    due_at: seller.now() + seller.env.reviewSeconds,
  })
}

/**
 * Finishes a due creative review: the creative, still pending (and not purged), is approved, or what the ad
 * server's review says (asked outside any transaction; the verdict commits with its pushes).
 */
export async function finishCreativeReview(seller: Seller, owner: string, creativeId: string): Promise<void> {
  const stored = await seller.records.get<CreativeRecord>(CREATIVE_KIND, creativeKey(owner, creativeId))
  if (stored?.body.status !== 'pending_review' || stored.body.purged_at) return
  const review = seller.platform.reviewCreative
  const verdict = review
    ? await callPlatform('review the creative', () => review.call(seller.platform, stored.body), seller.log)
    : { status: 'approved' as const }
  const now = await seller.records.get<CreativeRecord>(CREATIVE_KIND, creativeKey(owner, creativeId))
  if (now?.body.status !== 'pending_review' || now.body.purged_at) return
  await setCreativeStatus(seller, owner, creativeId, verdict.status, verdict.reason)
}

/** Assigns a creative to a package of one of the caller's buys (PACKAGE_NOT_FOUND when no buy has it). */
export async function assignCreative(
  seller: Seller,
  owner: string,
  assignment: { creative_id: string; package_id: string; weight?: number },
): Promise<void> {
  const buys = await seller.records.list<MediaBuyRecord>(BUY_KIND, { owner })
  const holder = buys.find((stored) =>
    stored.body.packages.some((pkg) => pkg.package_id === assignment.package_id),
  )
  if (!holder)
    throw new AgentError('PACKAGE_NOT_FOUND', `no package ${assignment.package_id}`, {
      field: 'assignments',
      status: 404,
    })
  await mutateBuy(seller.records, owner, holder.id, (buy) => {
    const pkg = buy.packages.find((candidate) => candidate.package_id === assignment.package_id)!
    if (!pkg.creative_assignments.some((a) => a.creative_id === assignment.creative_id))
      pkg.creative_assignments.push({
        creative_id: assignment.creative_id,
        ...(assignment.weight !== undefined ? { weight: assignment.weight } : {}),
      })
  })
}

/** The inline creatives of a create_media_buy request's packages, stored in the library. */
export async function storeInlineCreatives(
  seller: Seller,
  owner: string,
  request: Record<string, unknown>,
): Promise<void> {
  if (!Array.isArray(request.packages)) return
  for (const pkg of request.packages.filter(isObject))
    if (Array.isArray(pkg.creatives))
      for (const creative of pkg.creatives.filter(isObject)) {
        const { creative: stored } = await upsertCreative(seller, owner, creative)
        await scheduleReview(seller, owner, stored)
      }
}
