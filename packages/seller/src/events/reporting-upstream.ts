/**
 * Whether a buy's delivery data is ready: the reporting upstream of its owner is down while the test
 * controller's `force_upstream_unavailable` names `get_media_buy_delivery` (or `*`) for that caller, until the
 * outage's end when it gave `duration_seconds`, else for the session. A scheduled report due meanwhile is
 * `delayed`.
 */
import { UPSTREAM_KIND } from '../controller/scenarios.js'
import type { MediaBuyRecord } from '../media-buys/types.js'
import type { RecordStore } from '../storage/types.js'
import type { DataDelay } from './delivery-reports.js'

/** The tools whose upstream carries delivery data. */
const REPORTING_TOOLS = ['get_media_buy_delivery', '*'] as const

/** A forced outage (controller.ts `force_upstream_unavailable`). */
export interface UpstreamOutage {
  readonly tool: string
  readonly upstream: string
  /** Unix seconds. */
  readonly since: number
  /** Unix seconds the upstream is back; absent: for the session. */
  readonly until?: number
}

/**
 * @example
 * const delay = await reportingReadiness(records)(buy, now)   // undefined: the data is ready
 */
export function reportingReadiness(records: RecordStore) {
  return async (buy: MediaBuyRecord, at: number): Promise<DataDelay | undefined> => {
    // Outages are forced by the test controller, in the caller's sandbox: a live buy never waits for one.
    if (!buy.sandbox) return undefined
    for (const tool of REPORTING_TOOLS) {
      const outage = (await records.get<UpstreamOutage>(UPSTREAM_KIND, `${buy.owner}/${tool}`))?.body
      if (!outage || (outage.until !== undefined && outage.until <= at)) continue
      return {
        upstream: outage.upstream,
        ...(outage.until !== undefined ? { expectedAt: outage.until } : {}),
      }
    }
    return undefined
  }
}
