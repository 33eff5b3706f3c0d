/**
 * Measurement windows (core/measurement-window.json): billing-grade data that matures in stages, such as
 * broadcast TV's live → C3 → C7 as DVR viewing is counted. A buy's windows come from its products'
 * `reporting_capabilities.measurement_windows` (a linear TV product that declares none gets the broadcast
 * defaults). Delivery is grouped in periods of one measurement day (aligned on the epoch: UTC days by
 * default); a later window's data for a period is available `expected_availability_days` after the period
 * ends, and is sent as a `window_update` report that supersedes the window before it.
 */
import type { ProductSource } from '../catalog/product-source.js'
import type { MediaBuyRecord } from '../media-buys/types.js'

export interface MeasurementWindow {
  readonly window_id: string
  readonly duration_days: number
  readonly expected_availability_days?: number
  readonly is_guarantee_basis?: boolean
}

/** Broadcast linear TV: live within a day, C3 about 4 days and C7 about 8 days after air (C7 is billed). */
export const BROADCAST_WINDOWS: readonly MeasurementWindow[] = [
  { window_id: 'live', duration_days: 0, expected_availability_days: 1 },
  { window_id: 'c3', duration_days: 3, expected_availability_days: 4 },
  { window_id: 'c7', duration_days: 7, expected_availability_days: 8, is_guarantee_basis: true },
]

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The windows of a product, in order of availability; none when its data is final on first delivery. */
export function productWindows(product: Record<string, unknown>): MeasurementWindow[] {
  const reporting = isObject(product.reporting_capabilities) ? product.reporting_capabilities : {}
  const declared = Array.isArray(reporting.measurement_windows)
    ? reporting.measurement_windows.filter(
        (window): window is MeasurementWindow =>
          isObject(window) &&
          typeof window.window_id === 'string' &&
          typeof window.duration_days === 'number',
      )
    : []
  if (declared.length > 0) return [...declared].sort((a, b) => availability(a) - availability(b))
  const channels = Array.isArray(product.channels) ? product.channels : []
  return channels.includes('linear_tv') ? [...BROADCAST_WINDOWS] : []
}

/** Days after a period ends until a window's data for it is available. */
export const availability = (window: MeasurementWindow) =>
  window.expected_availability_days ?? window.duration_days + 1

/** The measurement windows of a buy: those of its first product that has more than one. */
export function buyWindows(products: ProductSource) {
  return async (buy: MediaBuyRecord): Promise<MeasurementWindow[]> => {
    for (const pkg of buy.packages) {
      const product = (await products.get(pkg.product_id, buy.sandbox ? buy.owner : undefined))?.product
      const windows = product ? productWindows(product as Record<string, unknown>) : []
      if (windows.length > 1) return windows
    }
    return []
  }
}

/** A range of periods whose data for `stage` (an index ≥ 1 of the windows) is now available. */
export interface MaturedRange {
  readonly stage: number
  readonly from: number
  readonly to: number
}

const floorTo = (value: number, unit: number) => Math.floor(value / unit) * unit

/** Per later window, where its maturation starts: the period the buy first served in. */
export const startCursors = (windows: readonly MeasurementWindow[], firstServed: number, day: number) =>
  windows.slice(1).map(() => floorTo(firstServed, day))

/** The first stage with periods newly matured at `at` (cursor: per stage, the end of the last one sent). */
export function nextMatured(
  windows: readonly MeasurementWindow[],
  cursors: readonly number[],
  at: number,
  day: number,
): MaturedRange | undefined {
  for (let stage = 1; stage < windows.length; stage++) {
    const from = cursors[stage - 1]!
    const to = floorTo(at - availability(windows[stage]!) * day, day)
    if (to > from) return { stage, from, to }
  }
  return undefined
}

/** When the next period matures for any stage. */
export function nextMaturity(windows: readonly MeasurementWindow[], cursors: readonly number[], day: number) {
  let earliest = Number.POSITIVE_INFINITY
  for (let stage = 1; stage < windows.length; stage++)
    earliest = Math.min(earliest, cursors[stage - 1]! + day + availability(windows[stage]!) * day)
  return earliest
}

/** Audience a window adds over live (time-shifted viewing): 4% of live a day of accumulation. */
const uplift = (window: MeasurementWindow) => 1 + 0.04 * window.duration_days

/**
 * A delivery row as a window's data: impressions with the window's time-shifted viewing, each package tagged
 * with the window it is measured in and the one it supersedes; final on the last (or guarantee-basis) window.
 */
export function asWindow(
  row: Record<string, unknown>,
  windows: readonly MeasurementWindow[],
  stage: number,
  finalizedAt: string,
): Record<string, unknown> {
  const window = windows[stage]!
  const final = stage === windows.length - 1 || window.is_guarantee_basis === true
  const byPackage = (row.by_package as Record<string, unknown>[]).map((pkg) => ({
    ...pkg,
    impressions: Math.floor(Number(pkg.impressions ?? 0) * uplift(window)),
    measurement_window: window.window_id,
    ...(stage > 0 ? { supersedes_window: windows[stage - 1]!.window_id } : {}),
    is_final: final,
    ...(final ? { finalized_at: finalizedAt } : {}),
  }))
  const totals = row.totals as Record<string, number>
  return {
    ...row,
    totals: { ...totals, impressions: byPackage.reduce((sum, pkg) => sum + pkg.impressions, 0) },
    by_package: byPackage,
    is_final: final,
    ...(final ? { finalized_at: finalizedAt } : {}),
  }
}
