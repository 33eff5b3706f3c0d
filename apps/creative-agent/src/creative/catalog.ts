/**
 * The creative agent's catalog of standard formats. Every entry is a `core/format.json` Format whose format_id
 * is `{agent_url, id}` with the agent's configured URL; `type` (display, video, audio, dooh) is carried as an
 * extra property, which format.json allows, so the `type` filter of list_creative_formats has something to read.
 */
import { FormatSchema, parseShape, type Format } from '@adwire/schemas'

export type FormatType = 'display' | 'video' | 'audio' | 'dooh'

/** A catalog format: the wire Format plus the `type` the list filter reads. */
export type CatalogFormat = Format & { type: FormatType }

type AssetSlot = Record<string, unknown> & { asset_id: string; asset_type: string; required: boolean }

const CLICK_MACROS = ['CLICK_URL', 'CACHEBUSTER', 'MEDIA_BUY_ID', 'PACKAGE_ID', 'CREATIVE_ID'] as const
const DISPLAY_MACROS = [
  ...CLICK_MACROS,
  'DEVICE_TYPE',
  'DOMAIN',
  'AD_WIDTH',
  'AD_HEIGHT',
  'GDPR',
  'GDPR_CONSENT',
]
const VIDEO_MACROS = [
  ...CLICK_MACROS,
  'DEVICE_TYPE',
  'PLAYER_WIDTH',
  'PLAYER_HEIGHT',
  'VIDEO_DURATION',
  'POD_POSITION',
]
const AUDIO_MACROS = [...CLICK_MACROS, 'DEVICE_TYPE', 'AUDIO_DURATION', 'STATION_ID']
const DOOH_MACROS = ['CACHEBUSTER', 'MEDIA_BUY_ID', 'CREATIVE_ID', 'TIMESTAMP', 'CITY', 'REGION', 'COUNTRY']

const slot = (
  asset_id: string,
  asset_type: string,
  required: boolean,
  extra: Record<string, unknown> = {},
): AssetSlot => ({ item_type: 'individual', asset_id, asset_type, required, ...extra })

const clickUrl = (required = true) =>
  slot('click_url', 'url', required, {
    asset_role: 'clickthrough',
    asset_group_id: 'landing_page_url',
    requirements: { role: 'clickthrough', protocols: ['https'], macro_support: true },
  })
const impressionTracker = () =>
  slot('impression_tracker', 'url', false, {
    asset_role: 'third_party_tracking',
    requirements: { role: 'impression_tracker', protocols: ['https'], macro_support: true },
  })
const fixedImage = (asset_id: string, width: number, height: number, required = true) =>
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
const text = (asset_id: string, max_length: number, required = true) =>
  slot(asset_id, 'text', required, { asset_role: asset_id, requirements: { max_length } })

const fixed = (width: number, height: number) => [
  { role: 'primary', dimensions: { width, height, unit: 'px' } },
]

interface Spec {
  id: string
  name: string
  type: FormatType
  description: string
  renders?: unknown[]
  assets: AssetSlot[]
  macros: readonly string[]
  extra?: Record<string, unknown>
}

/** The standard IAB display sizes the catalog offers as static images; the first few also as HTML5. */
const DISPLAY_SIZES: readonly (readonly [number, number, string])[] = [
  [300, 250, 'Medium Rectangle'],
  [728, 90, 'Leaderboard'],
  [320, 50, 'Mobile Banner'],
  [160, 600, 'Wide Skyscraper'],
  [300, 600, 'Half Page'],
  [336, 280, 'Large Rectangle'],
  [970, 250, 'Billboard'],
  [970, 90, 'Super Leaderboard'],
  [468, 60, 'Full Banner'],
  [320, 100, 'Large Mobile Banner'],
  [300, 50, 'Mobile Banner Small'],
  [250, 250, 'Square'],
  [120, 600, 'Skyscraper'],
]
const HTML_SIZES = new Set(['300x250', '728x90', '320x50', '160x600', '300x600'])
/**
 * The sizes also offered as composed units (`display_{size}`: image, headline and clickthrough, built into an
 * HTML5 serving tag) and as generative units (`display_{size}_generative`: generated from a brief).
 */
const COMPOSED_SIZES = new Set(['300x250', '728x90', '320x50'])

/** How long a headline may be on a banner of this height. */
const headlineLength = (height: number): number => (height <= 90 ? 50 : 90)

/** The optional HTML5 serving tag build_creative renders from a composed unit's image and copy. */
const servingTag = () =>
  slot('html', 'html', false, {
    asset_role: 'serving_tag',
    requirements: { max_file_size_kb: 150, sandbox: 'iframe', external_resources_allowed: false },
  })

const VIDEO_SPECS: readonly (readonly [string, string, number, number, number | undefined])[] = [
  ['video_16x9_15s', 'Video 16:9 15s', 1920, 1080, 15_000],
  ['video_16x9_30s', 'Video 16:9 30s', 1920, 1080, 30_000],
  ['video_16x9_6s_bumper', 'Video 16:9 6s Bumper', 1920, 1080, 6_000],
  ['video_720p', 'Video 1280x720', 1280, 720, undefined],
  ['video_vertical_9x16', 'Video Vertical 9:16', 1080, 1920, undefined],
  ['video_square_1x1', 'Video Square 1:1', 1080, 1080, undefined],
  ['video_ctv_30s', 'CTV Video 30s', 1920, 1080, 30_000],
]

/** The composed (`display_{size}`) and generative (`display_{size}_generative`) units of one display size. */
function composedSpecs(width: number, height: number, label: string): Spec[] {
  const size = `${width}x${height}`
  return [
    {
      id: `display_${size}`,
      name: `Display ${size} ${label}`,
      type: 'display',
      description: `A ${width}x${height} ${label} assembled from an image, an optional headline and a clickthrough URL; build_creative renders them into an HTML5 serving tag (the html asset), which inputs need not carry.`,
      renders: fixed(width, height),
      assets: [
        fixedImage('image', width, height),
        text('headline', headlineLength(height), false),
        clickUrl(),
        servingTag(),
        impressionTracker(),
      ],
      macros: DISPLAY_MACROS,
    },
    {
      id: `display_${size}_generative`,
      name: `Display ${size} ${label} Generative`,
      type: 'display',
      description: `A ${width}x${height} ${label} that build_creative generates from a brief (message, brand, promoted_offerings): a rendered image in the brand colours, headline and call to action, plus an HTML5 serving tag. A generated manifest sent back with a message is refined or resized into another generative size.`,
      renders: fixed(width, height),
      assets: [
        slot('brief', 'brief', false, { asset_role: 'creative_brief', asset_group_id: 'creative_brief' }),
        fixedImage('generated_image', width, height),
        text('headline', headlineLength(height), false),
        text('cta', 20, false),
        clickUrl(false),
        servingTag(),
        impressionTracker(),
      ],
      macros: DISPLAY_MACROS,
    },
  ]
}

function specs(): Spec[] {
  const out: Spec[] = []
  for (const [width, height, label] of DISPLAY_SIZES) {
    const size = `${width}x${height}`
    out.push({
      id: `display_${size}_image`,
      name: `Display ${size} ${label} Image`,
      type: 'display',
      description: `A static ${width}x${height} ${label} banner: one image and a clickthrough URL.`,
      renders: fixed(width, height),
      assets: [fixedImage('image', width, height), clickUrl(), impressionTracker()],
      macros: DISPLAY_MACROS,
    })
    if (HTML_SIZES.has(size)) {
      out.push({
        id: `display_${size}_html`,
        name: `Display ${size} ${label} HTML5`,
        type: 'display',
        description: `An HTML5 ${width}x${height} ${label} banner rendered in a sandboxed iframe.`,
        renders: fixed(width, height),
        assets: [
          slot('html', 'html', true, {
            asset_role: 'creative_markup',
            requirements: { max_file_size_kb: 150, sandbox: 'iframe', external_resources_allowed: false },
          }),
          clickUrl(),
          impressionTracker(),
        ],
        macros: DISPLAY_MACROS,
      })
    }
    if (COMPOSED_SIZES.has(size)) out.push(...composedSpecs(width, height, label))
  }
  out.push(
    {
      id: 'display_responsive_html',
      name: 'Display Responsive HTML5',
      type: 'display',
      description: 'A fluid HTML5 banner that fills its container between 300 and 1200 pixels wide.',
      renders: [
        {
          role: 'primary',
          dimensions: {
            min_width: 300,
            max_width: 1200,
            min_height: 50,
            max_height: 600,
            responsive: { width: true, height: true },
          },
        },
      ],
      assets: [slot('html', 'html', true, { requirements: { sandbox: 'iframe' } }), clickUrl()],
      macros: DISPLAY_MACROS,
    },
    {
      id: 'display_responsive_image',
      name: 'Display Responsive Image 1.91:1',
      type: 'display',
      description: 'A fluid-width image banner with a fixed 1.91:1 aspect ratio.',
      renders: [
        {
          role: 'primary',
          dimensions: {
            min_width: 300,
            max_width: 1200,
            aspect_ratio: '1.91:1',
            responsive: { width: true, height: true },
          },
        },
      ],
      assets: [
        slot('image', 'image', true, {
          requirements: { aspect_ratio: '1.91:1', min_width: 600, formats: ['jpg', 'png', 'svg'] },
        }),
        text('headline', 40, false),
        clickUrl(),
      ],
      macros: DISPLAY_MACROS,
    },
    {
      id: 'native_in_feed',
      name: 'Native In-Feed Card',
      type: 'display',
      description: 'A native card in a content feed: headline, body, main image, logo, call to action.',
      renders: [
        {
          role: 'primary',
          dimensions: { min_width: 300, max_width: 800, responsive: { width: true, height: true } },
        },
      ],
      assets: [
        text('headline', 50),
        text('body', 140),
        fixedImage('image', 1200, 628),
        fixedImage('logo', 128, 128, false),
        text('cta', 20),
        text('sponsor', 25, false),
        clickUrl(),
        impressionTracker(),
      ],
      macros: DISPLAY_MACROS,
      extra: { supported_disclosure_positions: ['prominent', 'footer'] },
    },
    {
      id: 'native_content_recommendation',
      name: 'Native Content Recommendation',
      type: 'display',
      description: 'A sponsored recommendation tile in a content widget: a thumbnail and a headline.',
      renders: fixed(300, 250),
      assets: [fixedImage('image', 600, 500), text('headline', 60), text('sponsor', 25), clickUrl()],
      macros: DISPLAY_MACROS,
      extra: { supported_disclosure_positions: ['footer'] },
    },
  )
  for (const [id, name, width, height, duration] of VIDEO_SPECS) {
    const aspect = width === height ? '1:1' : width > height ? '16:9' : '9:16'
    out.push({
      id,
      name,
      type: 'video',
      description: `A hosted ${width}x${height} (${aspect}) video${duration ? ` of up to ${duration / 1000}s` : ''} with a clickthrough URL.`,
      renders: fixed(width, height),
      assets: [
        slot('video', 'video', true, {
          asset_role: 'hero_video',
          requirements: {
            min_width: width,
            max_width: width,
            min_height: height,
            max_height: height,
            aspect_ratio: aspect,
            ...(duration ? { max_duration_ms: duration } : {}),
            containers: ['mp4', 'webm'],
            codecs: ['h264', 'vp9'],
          },
        }),
        clickUrl(false),
        impressionTracker(),
      ],
      macros: VIDEO_MACROS,
    })
  }
  out.push({
    id: 'video_vast_30s',
    name: 'Video VAST 30s',
    type: 'video',
    description: 'A VAST 4.x tag for an in-stream video of up to 30s.',
    renders: fixed(1920, 1080),
    assets: [slot('vast', 'vast', true, { requirements: { vast_version: '4.2' } })],
    macros: VIDEO_MACROS,
  })
  for (const seconds of [15, 30, 60]) {
    out.push({
      id: `audio_${seconds}s`,
      name: `Audio ${seconds}s Spot`,
      type: 'audio',
      description: `A ${seconds}-second hosted audio spot with an optional companion banner. Without an audio asset, build_creative renders the spot from the script (and voice) text.`,
      assets: [
        slot('audio', 'audio', true, {
          asset_role: 'audio_spot',
          asset_group_id: 'audio',
          requirements: {
            min_duration_ms: seconds * 1000 - 500,
            max_duration_ms: seconds * 1000 + 500,
            formats: ['mp3', 'aac', 'wav'],
            channels: ['mono', 'stereo'],
          },
        }),
        slot('script', 'text', false, {
          asset_role: 'voiceover_script',
          asset_group_id: 'script',
          requirements: { max_length: 800 },
        }),
        slot('voice', 'text', false, {
          asset_role: 'voice',
          asset_group_id: 'voice_id',
          requirements: { max_length: 64 },
        }),
        fixedImage('companion_image', 640, 640, false),
        clickUrl(false),
      ],
      macros: AUDIO_MACROS,
    })
  }
  out.push({
    id: 'audio_daast_30s',
    name: 'Audio DAAST 30s',
    type: 'audio',
    description: 'A DAAST tag for a streaming audio spot of up to 30s.',
    assets: [slot('daast', 'daast', true)],
    macros: AUDIO_MACROS,
  })
  for (const [id, name, width, height] of [
    ['dooh_landscape_1920x1080', 'DOOH Landscape Screen 1920x1080', 1920, 1080],
    ['dooh_portrait_1080x1920', 'DOOH Portrait Screen 1080x1920', 1080, 1920],
    ['dooh_billboard_1400x400', 'DOOH Digital Billboard 1400x400', 1400, 400],
  ] as const) {
    out.push({
      id,
      name,
      type: 'dooh',
      description: `A static ${width}x${height} image for a digital out-of-home screen (no clickthrough).`,
      renders: fixed(width, height),
      assets: [fixedImage('image', width, height)],
      macros: DOOH_MACROS,
      extra: { delivery: { loop_duration_ms: 10_000, dwell_time_ms: 8_000 } },
    })
  }
  out.push({
    id: 'dooh_video_landscape_15s',
    name: 'DOOH Landscape Video 15s',
    type: 'dooh',
    description: 'A silent 15-second 1920x1080 video for digital out-of-home screens.',
    renders: fixed(1920, 1080),
    assets: [
      slot('video', 'video', true, {
        requirements: {
          min_width: 1920,
          max_width: 1920,
          min_height: 1080,
          max_height: 1080,
          max_duration_ms: 15_000,
        },
      }),
    ],
    macros: DOOH_MACROS,
  })
  return out
}

/** Trailing slashes, and the `/mcp` or `/a2a` endpoint suffix, do not distinguish agent URLs. */
export function normalizeAgentUrl(url: string): string {
  // The agent's own MCP and A2A endpoint URLs name it too (what a buyer was given is often one of them).
  return url.replace(/\/+$/, '').replace(/\/(?:mcp|a2a)$/, '')
}

function build(agentUrl: string, spec: Spec): CatalogFormat {
  const format = {
    format_id: { agent_url: agentUrl, id: spec.id },
    name: spec.name,
    type: spec.type,
    description: spec.description,
    ...(spec.renders ? { renders: spec.renders } : {}),
    assets: spec.assets,
    supported_macros: [...spec.macros],
    accessibility: {
      wcag_level: spec.type === 'display' ? 'AA' : 'A',
      requires_accessible_assets: spec.type === 'display',
    },
    ...spec.extra,
  }
  return parseShape(FormatSchema, format, `catalog format ${spec.id}`) as CatalogFormat
}

/** The formats one agent serves, in list order, looked up by id. */
export class FormatCatalog {
  readonly agentUrl: string
  readonly formats: readonly CatalogFormat[]
  private readonly byId: Map<string, CatalogFormat>

  constructor(agentUrl: string, formats: readonly CatalogFormat[]) {
    this.agentUrl = agentUrl
    this.formats = formats
    this.byId = new Map(formats.map((format) => [format.format_id.id, format]))
  }

  /** The format with this id, if the format_id's agent_url is this agent's. */
  get(formatId: { agent_url: string; id: string }): CatalogFormat | undefined {
    if (normalizeAgentUrl(formatId.agent_url) !== normalizeAgentUrl(this.agentUrl)) return undefined
    return this.byId.get(formatId.id)
  }

  /** A catalog with more formats (validated against FormatSchema) appended, e.g. seeded test fixtures. */
  with(formats: readonly (Format & { type?: FormatType })[]): FormatCatalog {
    const extra = formats.map((format) => parseShape(FormatSchema, format, 'format') as CatalogFormat)
    return new FormatCatalog(this.agentUrl, [
      ...this.formats.filter((f) => !extra.some((e) => e.format_id.id === f.format_id.id)),
      ...extra,
    ])
  }
}

const cache = new Map<string, FormatCatalog>()

/** The standard catalog for the agent at `agentUrl` (built and validated once per URL). */
export function standardCatalog(agentUrl: string): FormatCatalog {
  let catalog = cache.get(agentUrl)
  if (!catalog) {
    catalog = new FormatCatalog(
      agentUrl,
      specs().map((spec) => build(agentUrl, spec)),
    )
    cache.set(agentUrl, catalog)
  }
  return catalog
}

/** Width and height of a format's primary render when it is fixed, else undefined. */
export function fixedSize(format: Format): { width: number; height: number } | undefined {
  const dimensions = format.renders?.[0]?.dimensions
  if (!dimensions || dimensions.width === undefined || dimensions.height === undefined) return undefined
  if (dimensions.responsive?.width || dimensions.responsive?.height) return undefined
  return { width: dimensions.width, height: dimensions.height }
}

/** Whether any render of the format adapts to its container. */
export function isResponsive(format: Format): boolean {
  return (format.renders ?? []).some(
    (render) =>
      render.dimensions?.responsive?.width === true || render.dimensions?.responsive?.height === true,
  )
}
