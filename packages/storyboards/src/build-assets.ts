/**
 * The `$build_assets_from_format` directive of sample requests (storyboard-schema.yaml, "Creative asset
 * expansion"): an `assets` object carrying it is replaced by an asset map for the required slots of the format it
 * names (a `FormatId` resolved against the formats earlier steps received), filled from the test kit (`assets.images[]`
 * for image slots, `assets.click_url` for URL slots). A slot it cannot fill fails the step before transport.
 */
import { UnresolvedSubstitution } from './substitute-error.js'
import { isRecord } from '@adwire/schemas/json'

interface KitImage {
  url?: string
  width?: number
  height?: number
}

interface FormatAsset {
  asset_id?: string
  asset_group_id?: string
  asset_type?: string
  item_type?: string
  required?: boolean
  requirements?: {
    min_width?: number
    max_width?: number
    min_height?: number
    max_height?: number
    width?: number
    height?: number
  }
}

function findFormat(
  reference: Record<string, unknown>,
  responses: Iterable<unknown>,
): { assets?: FormatAsset[] } | undefined {
  for (const response of responses) {
    const formats = isRecord(response) && Array.isArray(response.formats) ? response.formats : []
    for (const format of formats) {
      const id = isRecord(format) && isRecord(format.format_id) ? format.format_id.id : undefined
      if (id === reference.id) return format as { assets?: FormatAsset[] }
    }
  }
  return undefined
}

function fits(image: KitImage, requirements: FormatAsset['requirements'] = {}): boolean {
  const { width = 0, height = 0 } = image
  const r = requirements
  return (
    (r.width === undefined || r.width === width) &&
    (r.height === undefined || r.height === height) &&
    (r.min_width === undefined || width >= r.min_width) &&
    (r.max_width === undefined || width <= r.max_width) &&
    (r.min_height === undefined || height >= r.min_height) &&
    (r.max_height === undefined || height <= r.max_height)
  )
}

/**
 * The asset map for a format reference.
 * @example buildAssets({ id: 'display_300x250' }, responses, testKit) // { image: { asset_type: 'image', url, width: 300, height: 250 }, … }
 */
export function buildAssets(
  reference: unknown,
  responses: Iterable<unknown>,
  testKit: Record<string, unknown>,
): Record<string, unknown> {
  const token = `$build_assets_from_format: ${JSON.stringify(reference)}`
  if (!isRecord(reference) || typeof reference.id !== 'string') throw new UnresolvedSubstitution(token)
  const format = findFormat(reference, responses)
  if (!format)
    throw new UnresolvedSubstitution(`${token} (no earlier response listed format ${reference.id})`)
  const kit = isRecord(testKit.assets) ? testKit.assets : {}
  const images = (Array.isArray(kit.images) ? kit.images : []) as KitImage[]
  const out: Record<string, unknown> = {}
  for (const slot of format.assets ?? []) {
    if (slot.required === false) continue
    const key = slot.asset_group_id ?? slot.asset_id
    if (!key) continue
    if (slot.asset_type === 'image') {
      const image = images.find((candidate) => fits(candidate, slot.requirements))
      if (!image?.url) throw new UnresolvedSubstitution(`${token} (no test-kit image fits slot ${key})`)
      out[key] = { asset_type: 'image', url: image.url, width: image.width, height: image.height }
    } else if (slot.asset_type === 'url' && typeof kit.click_url === 'string') {
      out[key] = { asset_type: 'url', url: kit.click_url }
    } else {
      throw new UnresolvedSubstitution(
        `${token} (no test-kit value for the ${slot.asset_type ?? 'untyped'} slot ${key})`,
      )
    }
  }
  return out
}
