/** The standard display formats: IAB fixed sizes (image, HTML5, composed, generative), responsive and native. */
import {
  DISPLAY_MACROS,
  clickUrl,
  fixed,
  fixedImage,
  impressionTracker,
  slot,
  text,
  type Spec,
} from './format-spec.js'

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

/** The display formats, in list order. */
export function displaySpecs(): Spec[] {
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
  return out
}
