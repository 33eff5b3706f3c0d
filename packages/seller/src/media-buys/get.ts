/**
 * get_media_buys: the caller's buys by id, status or account, paged by cursor; each settled on the seller's
 * clock first (so a buy past its flight end reads completed), with health and impairments, the create
 * request's context, and `webhook_activity` when asked for (from the seam's activity source).
 */
import type { TaskContext } from '@adwire/agent-server'
import { naturalAccountId } from '../accounts/resolve.js'
import { pageOf, pageResponse } from '../catalog/get-products.js'
import { isoAt, isObject, ownerOf, type Seller } from '../seller.js'
import { settleBuy } from './reconcile.js'
import { BUY_KIND } from './repository.js'
import type { MediaBuyRecord } from './types.js'
import { buyView } from './view.js'

/** Recent webhook fires for a buy and principal (the outbox's record), or undefined when not surfaced. */
export type WebhookActivitySource = (
  buy: MediaBuyRecord,
  principalId: string,
  limit: number,
) => Promise<Record<string, unknown>[] | undefined>

const DEFAULT_STATUSES = ['pending_creatives', 'pending_start', 'active', 'paused']

/**
 * @example
 * await getMediaBuys(seller, { media_buy_ids: ['mb_1'] }, context, activity)
 */
export async function getMediaBuys(
  seller: Seller,
  request: Record<string, unknown>,
  context: TaskContext,
  activity?: WebhookActivitySource,
): Promise<Record<string, unknown>> {
  const owner = ownerOf(context)
  const ids = Array.isArray(request.media_buy_ids) ? new Set(request.media_buy_ids.map(String)) : undefined
  const statuses =
    request.status_filter === undefined
      ? ids
        ? undefined
        : DEFAULT_STATUSES
      : Array.isArray(request.status_filter)
        ? request.status_filter.map(String)
        : [String(request.status_filter)]
  const accountId = isObject(request.account)
    ? typeof request.account.account_id === 'string'
      ? request.account.account_id
      : naturalAccountId(owner, request.account)
    : undefined
  const stored = await seller.records.list<MediaBuyRecord>(BUY_KIND, { owner })
  const selected: { buy: MediaBuyRecord; revision: number }[] = []
  for (const entry of stored) {
    if (ids && !ids.has(entry.id)) continue
    if (accountId && !ids && entry.body.account_id !== accountId) continue
    selected.push(await settleBuy(seller, owner, entry.id))
  }
  const matching = selected.filter(({ buy }) => !statuses || statuses.includes(buy.status))
  const { limit, offset } = pageOf(request.pagination)
  const now = isoAt(seller.now())
  const limitActivity =
    typeof request.webhook_activity_limit === 'number' ? request.webhook_activity_limit : 10
  const page = []
  for (const { buy, revision } of matching.slice(offset, offset + limit)) {
    const webhookActivity =
      request.include_webhook_activity === true && activity
        ? await activity(buy, owner, limitActivity)
        : undefined
    page.push(
      buyView(buy, revision, {
        now,
        ...(webhookActivity ? { webhookActivity } : {}),
        ...(typeof request.include_history === 'number' && request.include_history > 0
          ? { history: request.include_history }
          : {}),
      }),
    )
  }
  const errors =
    ids === undefined
      ? []
      : [...ids]
          .filter((id) => !selected.some(({ buy }) => buy.media_buy_id === id))
          .map((id) => ({
            code: 'MEDIA_BUY_NOT_FOUND',
            message: `no media buy ${id} for this caller`,
            field: 'media_buy_ids',
          }))
  return {
    media_buys: page,
    ...(errors.length > 0 ? { errors } : {}),
    pagination: pageResponse(offset, limit, matching.length),
    ...(page.some((entry) => (entry.account as { sandbox?: boolean }).sandbox) ? { sandbox: true } : {}),
  }
}
