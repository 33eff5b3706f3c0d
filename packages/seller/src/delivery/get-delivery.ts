/**
 * get_media_buy_delivery: the caller's buys (by id, or by status), each settled on the seller's clock, with
 * simulated delivery over the requested dates; `time_granularity` must be one this seller declared
 * (UNSUPPORTED_GRANULARITY otherwise); aggregated totals across the buys.
 */
import { AgentError, type TaskContext } from '@adwire/agent-server'
import { WINDOWED_PULL_GRANULARITIES } from '../capabilities.js'
import { settleBuy } from '../media-buys/reconcile.js'
import { BUY_KIND, loadBuy } from '../media-buys/repository.js'
import type { MediaBuyRecord } from '../media-buys/types.js'
import { isoAt, ownerOf, type Seller } from '../seller.js'
import { buyDelivery, pricingOf } from './report.js'

/**
 * @example
 * await getMediaBuyDelivery(seller, { media_buy_ids: ['mb_1'], include_package_daily_breakdown: true }, context)
 */
export async function getMediaBuyDelivery(
  seller: Seller,
  request: Record<string, unknown>,
  context: TaskContext,
): Promise<Record<string, unknown>> {
  const owner = ownerOf(context)
  if (
    request.time_granularity !== undefined &&
    !(WINDOWED_PULL_GRANULARITIES as readonly string[]).includes(String(request.time_granularity))
  )
    throw new AgentError(
      'UNSUPPORTED_GRANULARITY',
      `time_granularity ${String(request.time_granularity)} is not offered; this seller pulls at ${WINDOWED_PULL_GRANULARITIES.join(', ')}`,
      { field: 'time_granularity', status: 400, details: { supported: [...WINDOWED_PULL_GRANULARITIES] } },
    )
  const startDate = typeof request.start_date === 'string' ? request.start_date : undefined
  const endDate = typeof request.end_date === 'string' ? request.end_date : undefined
  if (startDate && endDate && endDate < startDate)
    throw new AgentError('VALIDATION_ERROR', 'end_date is before start_date', {
      field: 'end_date',
      status: 400,
    })
  let ids: string[]
  if (Array.isArray(request.media_buy_ids)) {
    ids = request.media_buy_ids.map(String)
    for (const id of ids) await loadBuy(seller.records, owner, id)
  } else ids = (await seller.records.list<MediaBuyRecord>(BUY_KIND, { owner })).map((stored) => stored.id)
  const statuses =
    request.status_filter === undefined
      ? undefined
      : ([] as unknown[]).concat(request.status_filter).map(String)
  const now = seller.now()
  const deliveries: Record<string, unknown>[] = []
  let currency = 'USD'
  let earliest = now
  for (const id of ids) {
    const { buy } = await settleBuy(seller, owner, id)
    if (statuses && !statuses.includes(buy.status)) continue
    currency = buy.currency
    earliest = Math.min(earliest, Date.parse(buy.start_time) / 1000)
    deliveries.push(
      buyDelivery(buy, await pricingOf(seller.products, buy), {
        model: seller.delivery,
        now,
        ...(startDate ? { startDate } : {}),
        ...(endDate ? { endDate } : {}),
        packageDaily: request.include_package_daily_breakdown === true,
        windows: request.time_granularity === 'daily' && request.include_window_breakdown === true,
      }),
    )
  }
  const total = (key: 'impressions' | 'spend' | 'clicks') =>
    deliveries.reduce((sum, entry) => sum + Number((entry.totals as Record<string, number>)[key] ?? 0), 0)
  return {
    reporting_period: {
      start: startDate ? `${startDate}T00:00:00Z` : isoAt(earliest),
      end: endDate ? `${endDate}T23:59:59Z` : isoAt(now),
    },
    currency,
    aggregated_totals: {
      impressions: total('impressions'),
      spend: Math.round(total('spend') * 100) / 100,
      clicks: total('clicks'),
      media_buy_count: deliveries.length,
    },
    media_buy_deliveries: deliveries,
  }
}
