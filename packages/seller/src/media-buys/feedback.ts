/**
 * provide_performance_feedback: the buyer's performance index for a buy (or one of its packages or creatives)
 * over a measurement period, kept with the buy's feedback (record kind `performance_feedback`) for the
 * seller's optimisation; the buy and package must be the caller's.
 */
import { AgentError, type TaskContext } from '@adwire/agent-server'
import { isoAt, newId, ownerOf, type Seller } from '../seller.js'
import { loadBuy } from './repository.js'

export const FEEDBACK_KIND = 'performance_feedback'

/**
 * @example
 * await provideFeedback(seller, { media_buy_id, measurement_period, performance_index: 1.2 }, context)
 */
export async function provideFeedback(
  seller: Seller,
  request: Record<string, unknown>,
  context: TaskContext,
): Promise<Record<string, unknown>> {
  const owner = ownerOf(context)
  const { body: buy } = await loadBuy(seller.records, owner, String(request.media_buy_id))
  if (request.package_id !== undefined && !buy.packages.some((pkg) => pkg.package_id === request.package_id))
    throw new AgentError(
      'PACKAGE_NOT_FOUND',
      `no package ${String(request.package_id)} in media buy ${buy.media_buy_id}`,
      {
        field: 'package_id',
        status: 404,
      },
    )
  const { context: _context, idempotency_key: _key, ...feedback } = request
  await seller.records.insert(FEEDBACK_KIND, newId('fb'), owner, {
    ...feedback,
    received_at: isoAt(seller.now()),
  })
  return { success: true, ...(buy.sandbox ? { sandbox: true } : {}) }
}
