/**
 * Transformation: a complete manifest's assets fitted to another format (matched by slot key, then by type; images
 * refitted, text cut, a serving tag or an audio spot derived from what the manifest carries).
 */
import { renderedAudioAsset } from './audio.js'
import { fixedSize, type CatalogFormat } from '@adwire/formats'
import { CreativeError } from './errors.js'
import { checkAsset, slotsOf, type AssetValue, type Slot } from './manifest.js'
import { bannerHtml, fittedSvg, svgDataUrl, truncate, type Look } from './render.js'
import { audioDuration, imageSize, isClickSlot } from './build-generate.js'
import { isObject, targetField } from './build-request.js'

type Sources = readonly (readonly [string, AssetValue])[]

/** The text of the source asset under `key` (or a key containing it), if any. */
function sourceText(sources: Sources, pattern: RegExp): string | undefined {
  const found = sources.find(
    ([key, asset]) => pattern.test(key) && asset.asset_type === 'text' && typeof asset.content === 'string',
  )
  return found ? String(found[1].content) : undefined
}

/** The look with the source manifest's own copy (headline, body, call to action) where it has some. */
function sourceLook<L extends Look>(look: L, sources: Sources): L {
  const headline = sourceText(sources, /^(headline|title)$/)
  const body = sourceText(sources, /^(body|body_text|description)$/)
  const cta = sourceText(sources, /^(cta|call_to_action)$/)
  return {
    ...look,
    ...(headline ? { headline } : {}),
    ...(body ? { body } : headline ? { body: '' } : {}),
    ...(cta ? { cta } : {}),
  }
}

/**
 * What a slot missing from a source manifest can be made from: an HTML serving tag from an image, an audio spot
 * from a script. Undefined when nothing in the manifest makes it.
 */
export function derive(
  slot: Slot,
  sources: Sources,
  format: CatalogFormat,
  look: Look,
  clickUrl: AssetValue | undefined,
  agentUrl: string,
): AssetValue | undefined {
  if (slot.asset_type === 'html') {
    const image = sources.find(([, asset]) => asset.asset_type === 'image')?.[1]
    if (!image || typeof image.url !== 'string') return undefined
    return {
      asset_type: 'html',
      content: bannerHtml(
        fixedSize(format),
        look,
        typeof clickUrl?.url === 'string' ? clickUrl.url : '{CLICK_URL}',
        image.url,
      ),
      version: '5',
    }
  }
  if (slot.asset_type === 'audio') {
    const script = sourceText(sources, /script/)
    if (!script?.trim()) return undefined
    const voice = sourceText(sources, /voice/) ?? ''
    return renderedAudioAsset(agentUrl, script, voice, audioDuration(slot))
  }
  return undefined
}

/** The asset entries of a manifest's `assets` map (arrays flattened), keyed by their slot key. */
export function sourcesOf(source: Record<string, unknown>): Sources {
  return Object.entries(source).flatMap(([id, value]) =>
    (Array.isArray(value) ? value : [value])
      .filter(isObject)
      .map((asset) => [id, asset as AssetValue] as const),
  )
}

/** The assets of `format` made from a complete manifest's assets (VALIDATION_ERROR naming a slot it cannot fill). */
export function transform(
  format: CatalogFormat,
  source: Record<string, unknown>,
  baseLook: Look,
  index: number | undefined,
  agentUrl: string,
): Record<string, AssetValue> {
  const sources = sourcesOf(source)
  const look = sourceLook(baseLook, sources)
  // By slot key first; another key of the same type only fills a required slot (never an optional one, so a
  // headline does not turn into a call to action).
  const byType = (slot: Slot) =>
    sources.find(([key, asset]) => key === slot.asset_id && asset.asset_type === slot.asset_type)?.[1] ??
    (slot.required || slot.asset_type !== 'text'
      ? sources.find(([, asset]) => asset.asset_type === slot.asset_type)?.[1]
      : undefined)
  const clickUrl = sources.find(
    ([key, asset]) =>
      asset.asset_type === 'url' &&
      (key === 'click_url' || key === 'landing_page_url' || asset.url_type === 'clickthrough'),
  )?.[1]
  const assets: Record<string, AssetValue> = {}
  const fail = (slot: Slot, message: string): never => {
    throw new CreativeError(
      'VALIDATION_ERROR',
      `asset ${slot.asset_id} for ${format.format_id.id}: ${message}`,
      {
        field: `creative_manifest.assets.${slot.asset_id}`,
        details: { target: targetField(index), asset_id: slot.asset_id },
      },
    )
  }
  for (const slot of slotsOf(format)) {
    let asset: AssetValue | undefined
    if (slot.asset_type === 'url') {
      asset = isClickSlot(slot)
        ? clickUrl
        : sources.find(([key, a]) => key === slot.asset_id && a.asset_type === 'url')?.[1]
    } else {
      asset = byType(slot)
    }
    asset ??= derive(slot, sources, format, look, clickUrl, agentUrl)
    if (!asset) {
      if (slot.required) fail(slot, `the manifest has no ${slot.asset_type} asset to make it from`)
      continue
    }
    if (asset.asset_type === 'image') {
      const { width, height } = imageSize(slot, format)
      if (asset.width !== width || asset.height !== height) {
        asset = {
          asset_type: 'image',
          url: svgDataUrl(
            fittedSvg(
              width,
              height,
              String(asset.url),
              look.primary,
              String(asset.alt_text ?? look.headline),
            ),
          ),
          width,
          height,
          format: 'svg',
          ...(typeof asset.alt_text === 'string' ? { alt_text: asset.alt_text } : {}),
        }
      }
    } else if (asset.asset_type === 'text' && typeof asset.content === 'string') {
      const max = typeof slot.requirements?.max_length === 'number' ? slot.requirements.max_length : undefined
      asset = { ...asset, content: truncate(asset.content, max) }
    }
    const problem = checkAsset(slot, asset)
    if (problem) fail(slot, problem)
    assets[slot.asset_id] = asset
  }
  return assets
}
