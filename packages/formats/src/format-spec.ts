/**
 * The building blocks of the standard formats: asset slots (`core/assets/*` requirement objects), the macro
 * lists each channel supports, and the spec a catalog format is built from.
 */

/** The channel a catalog format belongs to; the `type` filter of list_creative_formats reads it. */
export type FormatType = 'display' | 'video' | 'audio' | 'dooh'

export type AssetSlot = Record<string, unknown> & { asset_id: string; asset_type: string; required: boolean }

export const CLICK_MACROS = ['CLICK_URL', 'CACHEBUSTER', 'MEDIA_BUY_ID', 'PACKAGE_ID', 'CREATIVE_ID'] as const
export const DISPLAY_MACROS = [
  ...CLICK_MACROS,
  'DEVICE_TYPE',
  'DOMAIN',
  'AD_WIDTH',
  'AD_HEIGHT',
  'GDPR',
  'GDPR_CONSENT',
]
export const VIDEO_MACROS = [
  ...CLICK_MACROS,
  'DEVICE_TYPE',
  'PLAYER_WIDTH',
  'PLAYER_HEIGHT',
  'VIDEO_DURATION',
  'POD_POSITION',
]
export const AUDIO_MACROS = [...CLICK_MACROS, 'DEVICE_TYPE', 'AUDIO_DURATION', 'STATION_ID']
export const DOOH_MACROS = [
  'CACHEBUSTER',
  'MEDIA_BUY_ID',
  'CREATIVE_ID',
  'TIMESTAMP',
  'CITY',
  'REGION',
  'COUNTRY',
]

export const slot = (
  asset_id: string,
  asset_type: string,
  required: boolean,
  extra: Record<string, unknown> = {},
): AssetSlot => ({ item_type: 'individual', asset_id, asset_type, required, ...extra })

export const clickUrl = (required = true) =>
  slot('click_url', 'url', required, {
    asset_role: 'clickthrough',
    asset_group_id: 'landing_page_url',
    requirements: { role: 'clickthrough', protocols: ['https'], macro_support: true },
  })
export const impressionTracker = () =>
  slot('impression_tracker', 'url', false, {
    asset_role: 'third_party_tracking',
    requirements: { role: 'impression_tracker', protocols: ['https'], macro_support: true },
  })
export const fixedImage = (asset_id: string, width: number, height: number, required = true) =>
  slot(asset_id, 'image', required, {
    asset_role: asset_id === 'logo' ? 'logo' : 'hero_image',
    requirements: {
      min_width: width,
      max_width: width,
      min_height: height,
      max_height: height,
      formats: ['jpg', 'png', 'gif', 'webp', 'svg'],
      max_file_size_kb: 200,
    },
  })
export const text = (asset_id: string, max_length: number, required = true) =>
  slot(asset_id, 'text', required, { asset_role: asset_id, requirements: { max_length } })

export const fixed = (width: number, height: number) => [
  { role: 'primary', dimensions: { width, height, unit: 'px' } },
]

export interface Spec {
  id: string
  name: string
  type: FormatType
  description: string
  renders?: unknown[]
  assets: AssetSlot[]
  macros: readonly string[]
  extra?: Record<string, unknown>
}
