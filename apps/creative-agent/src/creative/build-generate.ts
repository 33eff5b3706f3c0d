/**
 * Generation: the assets of a target format made from the brief's look (SVG images and HTML in the brand colours,
 * text cut to the slot's limits, an audio spot read from the headline and body, the clickthrough).
 */
import { renderedAudioAsset } from './audio.js'
import { fixedSize, type CatalogFormat } from '@adwire/formats'
import { CreativeError } from './errors.js'
import { slotsOf, type AssetValue, type Slot } from './manifest.js'
import { bannerHtml, bannerSvg, logoSvg, svgDataUrl, truncate, type Look } from './render.js'
import { targetField } from './build-request.js'

/** The pixel size an image slot needs: its fixed requirement, else its aspect ratio at 1200px, else the render. */
export function imageSize(slot: Slot, format: CatalogFormat): { width: number; height: number } {
  const req = slot.requirements ?? {}
  if (
    typeof req.min_width === 'number' &&
    req.min_width === req.max_width &&
    typeof req.min_height === 'number' &&
    req.min_height === req.max_height
  ) {
    return { width: req.min_width, height: req.min_height }
  }
  if (typeof req.aspect_ratio === 'string') {
    const [w, h] = req.aspect_ratio.split(':').map(Number) as [number, number]
    const width = Math.max(1200, typeof req.min_width === 'number' ? req.min_width : 0)
    return { width, height: Math.round((width * h) / w) }
  }
  return fixedSize(format) ?? { width: 1200, height: 628 }
}

function textFor(slot: Slot, look: Look): string {
  const max = typeof slot.requirements?.max_length === 'number' ? slot.requirements.max_length : undefined
  const id = slot.asset_id
  const content = /script/.test(id)
    ? spokenScript(look)
    : /cta|call_to_action/.test(id)
      ? look.cta
      : /sponsor|advertiser|brand/.test(id)
        ? look.brandName
        : /body|description/.test(id)
          ? look.body || look.headline
          : look.headline
  return truncate(content, max)
}

/** The words of an audio spot written from the brief: headline, then body. */
function spokenScript(look: Look): string {
  const headline = look.headline.trim()
  const body = look.body.trim()
  if (!body || body === headline) return headline
  return `${headline}${/[.!?]$/.test(headline) ? '' : '.'} ${body}`
}

/** Whether a slot carries the clickthrough (a v1 `click_url` or the canonical `landing_page_url`). */
export const isClickSlot = (slot: Slot): boolean =>
  slot.asset_type === 'url' &&
  (slot.asset_id === 'click_url' ||
    slot.asset_id === 'landing_page_url' ||
    slot.asset_role === 'clickthrough')

/** Whether a slot is a production input naming the voice of an audio spot. */
const isVoiceSlot = (slot: Slot): boolean => slot.asset_type === 'text' && /voice/.test(slot.asset_id)

/** The duration an audio slot asks for: the middle of its accepted range, or 30 s. */
export function audioDuration(slot: Slot): number {
  const req = slot.requirements ?? {}
  const min = typeof req.min_duration_ms === 'number' ? req.min_duration_ms : undefined
  const max = typeof req.max_duration_ms === 'number' ? req.max_duration_ms : undefined
  if (min !== undefined && max !== undefined) return Math.round((min + max) / 2)
  return max ?? min ?? 30_000
}

/** The assets of `format` generated from `look` (FORMAT_NOT_SUPPORTED for a required slot it cannot make). */
export function generate(
  format: CatalogFormat,
  look: Look & { landing?: string },
  index: number | undefined,
  agentUrl: string,
): Record<string, AssetValue> {
  const assets: Record<string, AssetValue> = {}
  const size = fixedSize(format)
  for (const slot of slotsOf(format)) {
    switch (slot.asset_type) {
      case 'image': {
        const { width, height } = imageSize(slot, format)
        const svg =
          slot.asset_id === 'logo' ? logoSvg(Math.min(width, height), look) : bannerSvg(width, height, look)
        assets[slot.asset_id] = {
          asset_type: 'image',
          url: svgDataUrl(svg),
          width: slot.asset_id === 'logo' ? Math.min(width, height) : width,
          height: slot.asset_id === 'logo' ? Math.min(width, height) : height,
          format: 'svg',
          alt_text: `${look.brandName}: ${look.headline}`,
        }
        break
      }
      case 'html':
        assets[slot.asset_id] = {
          asset_type: 'html',
          content: bannerHtml(size, look, look.landing ?? '{CLICK_URL}'),
          version: '5',
          accessibility: { alt_text: `${look.brandName}: ${look.headline}`, keyboard_navigable: true },
        }
        break
      case 'audio':
        assets[slot.asset_id] = renderedAudioAsset(agentUrl, spokenScript(look), '', audioDuration(slot))
        break
      case 'text':
        // A voice is the buyer's choice; the default rendition needs none.
        if (isVoiceSlot(slot)) break
        assets[slot.asset_id] = { asset_type: 'text', content: textFor(slot, look), language: 'en' }
        break
      case 'url':
        if (!isClickSlot(slot) && !slot.required) break
        if (!look.landing) {
          if (!slot.required) break
          throw new CreativeError(
            'VALIDATION_ERROR',
            `format ${format.format_id.id} needs a ${slot.asset_id} asset: give brand_manifest.url, an offering url or brand.domain`,
            { field: `creative_manifest.assets.${slot.asset_id}` },
          )
        }
        assets[slot.asset_id] = { asset_type: 'url', url: look.landing, url_type: 'clickthrough' }
        break
      default:
        if (slot.required) {
          throw new CreativeError(
            'FORMAT_NOT_SUPPORTED',
            `this agent cannot generate ${slot.asset_type} assets, which ${format.format_id.id} requires; send a complete manifest to transform instead`,
            { field: targetField(index) },
          )
        }
    }
  }
  return assets
}
