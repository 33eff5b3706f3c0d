import { describe, expect, it } from 'vitest'
import { officialErrors } from '@adwire/conformance/official'
import { buildCreative, type BuildCreativeResponse } from './build-creative.js'
import type { CreativeContext } from './context.js'
import { CreativeError, errorResponse } from './errors.js'
import { createMemoryPreviewStore, renderPreview } from './preview-store.js'

const AGENT_URL = 'https://creative.adwire.example'
const ctx: CreativeContext = { agentUrl: AGENT_URL, now: new Date('2026-01-01T00:00:00Z') }
const fid = (id: string) => ({ agent_url: AGENT_URL, id })
const KEY = 'build-key-0000000001'

const brief = (target = 'display_300x250_image') => ({
  idempotency_key: KEY,
  context: { correlation_id: 'build-1' },
  target_format_id: fid(target),
  creative_manifest: {
    format_id: fid(target),
    assets: {
      promoted_offerings: {
        brand_manifest: {
          name: 'Acme Coffee',
          url: 'https://acme.example/',
          colors: { primary: '#6B3E26', secondary: '#F2C14E' },
        },
        inline_offerings: [
          { name: 'Cold Brew Spring Sale', description: 'Two for one on every cold brew until May.' },
        ],
      },
    },
  },
})

async function build(input: unknown, context = ctx): Promise<BuildCreativeResponse> {
  const response = await buildCreative(input, context)
  expect(officialErrors('media-buy/build-creative-response.json', response)).toEqual([])
  return response
}
const manifestOf = (response: BuildCreativeResponse) => {
  if (!('creative_manifest' in response)) throw new Error('not a single build')
  return response.creative_manifest
}
const decodeSvg = (url: unknown) =>
  Buffer.from(String(url).replace('data:image/svg+xml;base64,', ''), 'base64').toString('utf8')

async function failure(input: unknown): Promise<CreativeError> {
  const error = await buildCreative(input, ctx).catch((e: unknown) => e)
  expect(error).toBeInstanceOf(CreativeError)
  expect(officialErrors('media-buy/build-creative-response.json', errorResponse(error, input))).toEqual([])
  return error as CreativeError
}

describe('build_creative from a brief', () => {
  it('generates a complete, valid manifest with an SVG image in the brand colours and echoes context', async () => {
    const response = await build(brief())
    const manifest = manifestOf(response)
    expect(manifest.format_id).toEqual(fid('display_300x250_image'))
    expect(officialErrors('core/creative-manifest.json', manifest)).toEqual([])
    const image = manifest.assets.image!
    expect(image).toMatchObject({ asset_type: 'image', width: 300, height: 250, format: 'svg' })
    const svg = decodeSvg(image.url)
    expect(svg).toContain('<svg')
    expect(svg).toContain('#6b3e26')
    expect(svg).toContain('#f2c14e')
    expect(svg).toContain('Cold Brew Spring Sale')
    expect(manifest.assets.click_url).toEqual({
      asset_type: 'url',
      url: 'https://acme.example/',
      url_type: 'clickthrough',
    })
    expect(response.context).toEqual({ correlation_id: 'build-1' })
    expect(JSON.stringify(manifest)).not.toContain('promoted_offerings')
  })

  it('generates HTML from the colours and the offering text', async () => {
    const manifest = manifestOf(await build(brief('display_728x90_html')))
    const html = String(manifest.assets.html!.content)
    expect(html).toMatch(/^<!doctype html>/)
    expect(html).toContain('background:#6b3e26')
    expect(html).toContain('Two for one on every cold brew until May.')
    expect(html).toContain('href="https://acme.example/"')
    expect(html).toContain('width:728px;height:90px')
  })

  it('fills native text slots within their max_length, plus image and logo', async () => {
    const manifest = manifestOf(await build(brief('native_in_feed')))
    expect(manifest.assets.headline).toMatchObject({ asset_type: 'text', content: 'Cold Brew Spring Sale' })
    expect(String(manifest.assets.sponsor!.content)).toBe('Acme Coffee')
    expect(String(manifest.assets.body!.content).length).toBeLessThanOrEqual(140)
    expect(manifest.assets.image).toMatchObject({ width: 1200, height: 628 })
    expect(manifest.assets.logo).toMatchObject({ width: 128, height: 128 })
  })

  it('is deterministic: the same request gives the same bytes', async () => {
    const a = JSON.stringify(await buildCreative(brief(), ctx))
    const b = JSON.stringify(
      await buildCreative(structuredClone(brief()), { ...ctx, now: new Date('2030-01-01T00:00:00Z') }),
    )
    expect(a).toBe(b)
    const other = brief()
    other.creative_manifest.assets.promoted_offerings.brand_manifest.colors.primary = '#000000'
    expect(JSON.stringify(await buildCreative(other, ctx))).not.toBe(a)
  })

  it('accepts the 3.1-valid brief-asset form of promoted_offerings and brand colours from brand_kit_override', async () => {
    const manifest = manifestOf(
      await build({
        idempotency_key: KEY,
        target_format_id: fid('dooh_landscape_1920x1080'),
        brand: {
          domain: 'acme.example',
          brand_kit_override: { colors: { primary: '#112233', secondary: '#445566' } },
        },
        creative_manifest: {
          format_id: fid('dooh_landscape_1920x1080'),
          assets: {
            promoted_offerings: {
              asset_type: 'brief',
              name: 'Spring',
              inline_offerings: [{ name: 'Fresh Bread' }],
            },
          },
        },
      }),
    )
    const svg = decodeSvg(manifest.assets.image!.url)
    expect(svg).toContain('#112233')
    expect(svg).toContain('Fresh Bread')
  })

  it('builds several formats at once (target_format_ids), atomically', async () => {
    const input = {
      ...brief(),
      target_format_id: undefined,
      target_format_ids: [fid('display_300x250_image'), fid('display_728x90_html'), fid('native_in_feed')],
    }
    const response = await build(input)
    if (!('creative_manifests' in response)) throw new Error('expected creative_manifests')
    expect(response.creative_manifests.map((m) => m.format_id?.id)).toEqual([
      'display_300x250_image',
      'display_728x90_html',
      'native_in_feed',
    ])
    const error = await failure({
      ...input,
      target_format_ids: [fid('display_300x250_image'), fid('video_16x9_30s')],
    })
    expect(error).toMatchObject({ code: 'FORMAT_NOT_SUPPORTED', status: 404, field: 'target_format_ids[1]' })
  })

  it('includes previews when asked', async () => {
    const previews = createMemoryPreviewStore()
    const response = await build({ ...brief(), include_preview: true }, { ...ctx, previews })
    if (!('creative_manifest' in response) || !response.preview) throw new Error('expected a preview')
    const render = response.preview.previews[0]!.renders[0]!
    expect(render.output_format).toBe('url')
    const id = render.output_format === 'url' ? render.preview_url.split('/').pop()! : ''
    expect(renderPreview(id, ctx.now, previews)).toMatchObject({ status: 200 })
  })

  it('answers mode estimate without building', async () => {
    const response = await build({ ...brief(), mode: 'estimate' })
    expect(response).toMatchObject({ mode: 'estimate', estimate: { basis: 'fixed', items_to_produce: 1 } })
  })
})

describe('build_creative transformation', () => {
  const complete = {
    format_id: fid('display_300x250_image'),
    assets: {
      image: {
        asset_type: 'image',
        url: 'https://cdn.acme.example/mr.png',
        width: 300,
        height: 250,
        alt_text: 'Cold brew',
      },
      click_url: { asset_type: 'url', url: 'https://acme.example/cold-brew', url_type: 'clickthrough' },
    },
  }

  it('refits the image into the target size and keeps the clickthrough', async () => {
    const manifest = manifestOf(
      await build({
        idempotency_key: KEY,
        target_format_id: fid('display_728x90_image'),
        creative_manifest: complete,
      }),
    )
    expect(manifest.format_id).toEqual(fid('display_728x90_image'))
    expect(manifest.assets.image).toMatchObject({
      asset_type: 'image',
      width: 728,
      height: 90,
      format: 'svg',
    })
    expect(decodeSvg(manifest.assets.image!.url)).toContain('https://cdn.acme.example/mr.png')
    expect(manifest.assets.click_url!.url).toBe('https://acme.example/cold-brew')
  })

  it('turns an image creative into an HTML5 creative', async () => {
    const manifest = manifestOf(
      await build({
        idempotency_key: KEY,
        target_format_id: fid('display_300x250_html'),
        creative_manifest: complete,
      }),
    )
    expect(String(manifest.assets.html!.content)).toContain('src="https://cdn.acme.example/mr.png"')
  })

  it('keeps an image of the right size unchanged', async () => {
    const manifest = manifestOf(
      await build({
        idempotency_key: KEY,
        target_format_id: fid('display_300x250_image'),
        creative_manifest: complete,
      }),
    )
    expect(manifest.assets.image).toEqual(complete.assets.image)
  })

  it('rejects (422) a target whose required asset cannot be derived, naming the asset', async () => {
    const error = await failure({
      idempotency_key: KEY,
      target_format_id: fid('video_16x9_30s'),
      creative_manifest: complete,
    })
    expect(error).toMatchObject({
      code: 'VALIDATION_ERROR',
      status: 422,
      field: 'creative_manifest.assets.video',
    })
  })

  it('rejects (422) a video longer than the target allows', async () => {
    const video = {
      format_id: fid('video_16x9_30s'),
      assets: {
        video: {
          asset_type: 'video',
          url: 'https://cdn.acme.example/a.mp4',
          width: 1920,
          height: 1080,
          duration_ms: 30_000,
        },
      },
    }
    expect(
      manifestOf(
        await build({
          idempotency_key: KEY,
          target_format_id: fid('video_ctv_30s'),
          creative_manifest: video,
        }),
      ).assets.video,
    ).toEqual(video.assets.video)
    const error = await failure({
      idempotency_key: KEY,
      target_format_id: fid('video_16x9_15s'),
      creative_manifest: video,
    })
    expect(error).toMatchObject({
      code: 'VALIDATION_ERROR',
      status: 422,
      field: 'creative_manifest.assets.video',
    })
    expect(error.message).toContain('over the maximum 15000 ms')
  })

  it('rejects (422) a source manifest that does not meet its own format', async () => {
    const bad = {
      ...complete,
      assets: { ...complete.assets, image: { ...complete.assets.image, width: 320, height: 50 } },
    }
    const error = await failure({
      idempotency_key: KEY,
      target_format_id: fid('display_728x90_image'),
      creative_manifest: bad,
    })
    expect(error).toMatchObject({ status: 422, field: 'creative_manifest.assets.image' })
  })
})

describe('build_creative errors', () => {
  it('FORMAT_NOT_SUPPORTED (404) for an unknown id or another agent', async () => {
    expect(await failure({ ...brief(), target_format_id: fid('display_1x1_image') })).toMatchObject({
      code: 'FORMAT_NOT_SUPPORTED',
      status: 404,
      field: 'target_format_id',
      recovery: 'correctable',
    })
    expect(
      await failure({
        ...brief(),
        target_format_id: { agent_url: 'https://other.example', id: 'display_300x250_image' },
      }),
    ).toMatchObject({
      code: 'FORMAT_NOT_SUPPORTED',
    })
  })

  it('FORMAT_NOT_SUPPORTED when generating into a format that needs video', async () => {
    expect(await failure(brief('video_16x9_30s'))).toMatchObject({
      code: 'FORMAT_NOT_SUPPORTED',
      status: 404,
      field: 'target_format_id',
    })
  })

  it('INVALID_FORMAT_ID (400) for bare string format_ids', async () => {
    expect(await failure({ ...brief(), target_format_id: 'display_300x250_image' })).toMatchObject({
      code: 'INVALID_FORMAT_ID',
      status: 400,
      field: 'target_format_id',
    })
    expect(
      await failure({
        ...brief(),
        target_format_id: undefined,
        target_format_ids: [fid('native_in_feed'), 'x'],
      }),
    ).toMatchObject({
      code: 'INVALID_FORMAT_ID',
      field: 'target_format_ids[1]',
    })
    const input = brief()
    ;(input.creative_manifest as { format_id: unknown }).format_id = 'display_300x250_image'
    expect(await failure(input)).toMatchObject({
      code: 'INVALID_FORMAT_ID',
      field: 'creative_manifest.format_id',
    })
  })

  it('INVALID_REQUEST (400) for both or neither target, a missing idempotency_key, or a bad brief', async () => {
    expect(await failure({ ...brief(), target_format_ids: [fid('native_in_feed')] })).toMatchObject({
      code: 'INVALID_REQUEST',
      status: 400,
      field: 'target_format_ids',
    })
    expect(await failure({ ...brief(), target_format_id: undefined })).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'target_format_id',
    })
    expect(await failure({ ...brief(), idempotency_key: undefined })).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'idempotency_key',
    })
    const bad = brief() as { creative_manifest: { assets: Record<string, unknown> } }
    bad.creative_manifest.assets.promoted_offerings = { inline_offerings: 'nope' }
    expect(await failure(bad)).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'creative_manifest.assets.promoted_offerings',
    })
  })

  it('VALIDATION_ERROR (422) for a colour that is not hex, or no landing page for a required click_url', async () => {
    const input = brief()
    input.creative_manifest.assets.promoted_offerings.brand_manifest.colors.primary = 'brown'
    expect(await failure(input)).toMatchObject({
      code: 'VALIDATION_ERROR',
      status: 422,
      field: 'creative_manifest.assets.promoted_offerings.brand_manifest.colors.primary',
    })
    const noUrl = brief()
    delete (noUrl.creative_manifest.assets.promoted_offerings.brand_manifest as { url?: string }).url
    expect(await failure(noUrl)).toMatchObject({
      code: 'VALIDATION_ERROR',
      field: 'creative_manifest.assets.click_url',
    })
  })
})

describe('build_creative audio', () => {
  const kit = (voice = 'narrator-warm') => ({
    idempotency_key: KEY,
    target_format_id: fid('audio_30s'),
    creative_manifest: {
      format_id: fid('audio_30s'),
      assets: {
        script: {
          asset_type: 'text',
          content: 'Built for the trail. Acme Outdoor — premium gear for every adventure.',
        },
        voice: { asset_type: 'text', content: voice },
        click_url: { asset_type: 'url', url: 'https://acmeoutdoor.example/summer-sale' },
      },
    },
  })

  it('renders the required audio from the script and voice, hosted by the agent, deterministically', async () => {
    const manifest = manifestOf(await build(kit()))
    const audio = manifest.assets.audio!
    expect(audio).toMatchObject({
      asset_type: 'audio',
      duration_ms: 30_000,
      container_format: 'wav',
      channels: 'mono',
      bit_depth: 16,
    })
    expect(String(audio.url)).toMatch(
      /^https:\/\/creative\.adwire\.example\/generated\/audio\/[0-9a-f]{16}-30000\.wav$/,
    )
    expect(manifest.assets.script).toEqual(kit().creative_manifest.assets.script)
    expect(manifest.assets.click_url!.url).toBe('https://acmeoutdoor.example/summer-sale')
    expect(manifestOf(await build(kit())).assets.audio).toEqual(audio)
    expect(manifestOf(await build(kit('narrator-bright'))).assets.audio!.url).not.toBe(audio.url)
  })

  it('renders a spot from a brief, with the script it read', async () => {
    const manifest = manifestOf(await build(brief('audio_15s')))
    expect(manifest.assets.audio).toMatchObject({ asset_type: 'audio', duration_ms: 15_000 })
    expect(manifest.assets.script!.content).toBe(
      'Cold Brew Spring Sale. Two for one on every cold brew until May.',
    )
  })

  it('rejects (422) an audio manifest with neither audio nor a script, naming the audio asset', async () => {
    const input = kit()
    const { script: _script, ...assets } = input.creative_manifest.assets
    const error = await failure({ ...input, creative_manifest: { ...input.creative_manifest, assets } })
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', field: 'creative_manifest.assets.audio' })
  })
})

describe('build_creative composed and generative display units', () => {
  const source = {
    format_id: fid('source_master'),
    assets: {
      image: { asset_type: 'image', url: 'https://cdn.acme.example/hero.jpg', width: 1200, height: 628 },
      click_url: { asset_type: 'url', url: 'https://acme.example/sale' },
      headline: { asset_type: 'text', content: 'Summer Sale — 40% Off All Gear' },
    },
  }

  it('builds display_{size} units with an HTML serving tag from the image and headline', async () => {
    const response = await build({
      idempotency_key: KEY,
      creative_manifest: source,
      target_format_ids: ['display_300x250', 'display_728x90', 'display_320x50'].map(fid),
    })
    if (!('creative_manifests' in response)) throw new Error('expected creative_manifests')
    const [mrec, leaderboard, mobile] = response.creative_manifests
    expect(mrec!.assets.image).toMatchObject({ width: 300, height: 250 })
    expect(leaderboard!.assets.image).toMatchObject({ width: 728, height: 90 })
    expect(mobile!.assets.image).toMatchObject({ width: 320, height: 50 })
    const html = String(mrec!.assets.html!.content)
    expect(html).toContain('src="https://cdn.acme.example/hero.jpg"')
    expect(html).toContain('Summer Sale — 40% Off All Gear')
    expect(html).toContain('href="https://acme.example/sale"')
  })

  it('generates a display_{size}_generative unit from a message and the account brand', async () => {
    const manifest = manifestOf(
      await build({
        idempotency_key: KEY,
        message: 'Summer outdoor gear sale, 40% off',
        target_format_id: fid('display_300x250_generative'),
        account: { brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle-agency.example' },
        include_preview: true,
      }),
    )
    expect(Object.keys(manifest.assets).sort()).toEqual(
      ['click_url', 'cta', 'generated_image', 'headline', 'html'].sort(),
    )
    expect(manifest.assets.generated_image).toMatchObject({ width: 300, height: 250, format: 'svg' })
    expect(manifest.assets.click_url!.url).toBe('https://acmeoutdoor.example/')
  })

  it('refines a generated manifest without inventing a call to action from the headline', async () => {
    const manifest = manifestOf(
      await build({
        idempotency_key: KEY,
        message: 'Make the headline larger.',
        target_format_id: fid('display_300x250_generative'),
        creative_manifest: {
          format_id: fid('display_300x250_generative'),
          assets: {
            generated_image: {
              asset_type: 'image',
              url: 'https://cdn.acme.example/g.jpg',
              width: 300,
              height: 250,
            },
            headline: { asset_type: 'text', content: 'Summer Sale' },
          },
        },
      }),
    )
    expect(manifest.assets.headline!.content).toBe('Summer Sale')
    expect(manifest.assets.cta).toBeUndefined()
    expect(String(manifest.assets.html!.content)).toContain('<h1>Summer Sale</h1>')
  })
})
