/** Checks a creative manifest against a catalog format's asset slots and requirements. */
import type { CatalogFormat } from '@adwire/formats'

export type AssetValue = Record<string, unknown> & { asset_type: string }
export type Slot = Record<string, unknown> & {
  asset_id: string
  asset_type: string
  required: boolean
  requirements?: Record<string, unknown>
}

/** The individual asset slots of a format, in order. */
export function slotsOf(format: CatalogFormat): Slot[] {
  return (format.assets ?? []).filter(
    (asset) => (asset as { item_type?: string }).item_type === 'individual',
  ) as Slot[]
}

export interface ManifestIssue {
  asset_id: string
  message: string
}

const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined)

/** What is wrong with `asset` for `slot`, or undefined when it fits. */
export function checkAsset(slot: Slot, asset: AssetValue): string | undefined {
  if (asset.asset_type !== slot.asset_type)
    return `is ${asset.asset_type}, the format needs ${slot.asset_type}`
  const req = slot.requirements ?? {}
  if (asset.asset_type === 'image' || asset.asset_type === 'video') {
    const width = num(asset.width)
    const height = num(asset.height)
    if (width !== undefined && height !== undefined) {
      if (num(req.min_width) !== undefined && width < num(req.min_width)!)
        return `is ${width}px wide, under the minimum ${String(req.min_width)}px`
      if (num(req.max_width) !== undefined && width > num(req.max_width)!)
        return `is ${width}px wide, over the maximum ${String(req.max_width)}px`
      if (num(req.min_height) !== undefined && height < num(req.min_height)!)
        return `is ${height}px high, under the minimum ${String(req.min_height)}px`
      if (num(req.max_height) !== undefined && height > num(req.max_height)!)
        return `is ${height}px high, over the maximum ${String(req.max_height)}px`
    }
  }
  if (asset.asset_type === 'video' || asset.asset_type === 'audio') {
    const duration = num(asset.duration_ms)
    if (duration !== undefined) {
      if (num(req.max_duration_ms) !== undefined && duration > num(req.max_duration_ms)!)
        return `lasts ${duration} ms, over the maximum ${String(req.max_duration_ms)} ms`
      if (num(req.min_duration_ms) !== undefined && duration < num(req.min_duration_ms)!)
        return `lasts ${duration} ms, under the minimum ${String(req.min_duration_ms)} ms`
    }
  }
  if (asset.asset_type === 'text' && typeof asset.content === 'string') {
    const max = num(req.max_length)
    if (max !== undefined && asset.content.length > max)
      return `has ${asset.content.length} characters, over the maximum ${max}`
  }
  return undefined
}

/** Every way `assets` fails `format`: missing required slots and assets that do not meet their slot's requirements. */
export function manifestIssues(format: CatalogFormat, assets: Record<string, unknown>): ManifestIssue[] {
  const issues: ManifestIssue[] = []
  for (const slot of slotsOf(format)) {
    const value = assets[slot.asset_id]
    if (value === undefined) {
      if (slot.required)
        issues.push({ asset_id: slot.asset_id, message: `required ${slot.asset_type} asset is missing` })
      continue
    }
    for (const asset of Array.isArray(value) ? value : [value]) {
      const problem = checkAsset(slot, asset as AssetValue)
      if (problem) issues.push({ asset_id: slot.asset_id, message: problem })
    }
  }
  return issues
}
