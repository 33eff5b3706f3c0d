import { readFileSync } from 'node:fs'
import { conformancePath } from '@adwire/conformance'
import { describe, expect, it } from 'vitest'
import { officialErrors } from '@adwire/conformance/official'
import { buildCreative, type BuildCreativeResponse } from './build-creative.js'
import { buildCapabilities, findCapability, supportedFormats } from './canonical.js'
import { standardCatalog } from '@adwire/formats'
import type { CreativeContext } from './context.js'
import { CreativeError } from './errors.js'

const AGENT_URL = 'https://creative.adwire.example'
const catalog = standardCatalog(AGENT_URL)
const ctx: CreativeContext = { agentUrl: AGENT_URL, now: new Date('2026-01-01T00:00:00Z'), catalog }
const target = (id: string) => ({ agent_url: AGENT_URL, id })
const KEY = 'canonical-key-000001'

/** The pixel-density vectors of the conformance bundle (`test-vectors/canonical-image-pixel-ratio.json`). */
const pixelVectors = (
  JSON.parse(readFileSync(conformancePath('test-vectors/canonical-image-pixel-ratio.json'), 'utf8')) as {
    vectors: {
      id: string
      params: Record<string, unknown>
      asset: { width: number; height: number }
      expected: { valid: boolean }
    }[]
  }
).vectors

async function build(input: Record<string, unknown>): Promise<BuildCreativeResponse> {
  const response = await buildCreative(input, ctx)
  expect(officialErrors('media-buy/build-creative-response.json', response)).toEqual([])
  return response
}
const manifestOf = (response: BuildCreativeResponse) => {
  if (!('creative_manifest' in response)) throw new Error('not a single build')
  return response.creative_manifest
}

describe('creative.supported_formats', () => {
  const entries = supportedFormats(catalog)

  it('advertises an image capability first, with canonical slots and a v1 format it narrows', () => {
    expect(entries[0]).toMatchObject({
      capability_id: 'image_300x250',
      format: {
        format_kind: 'image',
        v1_format_ref: [target('display_300x250_image')],
        params: { width: 300, height: 250 },
      },
    })
    expect(entries[0]!.format.params.slots.map((slot) => slot.asset_group_id)).toEqual([
      'image_main',
      'headline',
      'cta',
      'landing_page_url',
    ])
    expect(entries.some((entry) => entry.format.format_kind === 'audio_hosted')).toBe(true)
  })

  it.each(supportedFormats(catalog).map((entry) => [entry.capability_id, entry] as const))(
    '%s is a valid ProductFormatDeclaration whose v1 reference is in the catalog',
    (_id, entry) => {
      expect(officialErrors('core/product-format-declaration.json', entry.format)).toEqual([])
      expect(entry.format).not.toHaveProperty('format_option_id')
      for (const ref of entry.format.v1_format_ref) expect(catalog.get(ref)).toBeDefined()
    },
  )

  it('has capability ids that are unique and never a catalog format id', () => {
    const ids = entries.map((entry) => entry.capability_id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) expect(catalog.get(target(id))).toBeUndefined()
  })

  it('finds a capability only under this agent URL', () => {
    expect(findCapability(catalog, target('image_728x90'))?.format_kind).toBe('image')
    expect(
      findCapability(catalog, { agent_url: 'https://other.example', id: 'image_728x90' }),
    ).toBeUndefined()
    expect(findCapability(catalog, target('display_728x90_image'))).toBeUndefined()
  })
})

describe('build_creative by capability_id', () => {
  it('generates a canonical image manifest (format_kind, no format_id) keyed by canonical slots', async () => {
    const manifest = manifestOf(
      await build({
        idempotency_key: KEY,
        message: 'Summer trail sale',
        brand: { domain: 'acmeoutdoor.example' },
        target_format_id: target('image_300x250'),
        include_preview: true,
      }),
    )
    expect(manifest.format_kind).toBe('image')
    expect(manifest).not.toHaveProperty('format_id')
    expect(officialErrors('core/creative-manifest.json', manifest)).toEqual([])
    expect(Object.keys(manifest.assets).sort()).toEqual(['cta', 'headline', 'image_main', 'landing_page_url'])
    expect(manifest.assets.image_main).toMatchObject({ asset_type: 'image', width: 300, height: 250 })
    expect(manifest.assets.landing_page_url).toMatchObject({ url: 'https://acmeoutdoor.example/' })
  })

  it('gives image_main at the declared logical size: pixel ratio 1, as the conformance vectors require', async () => {
    const capability = findCapability(catalog, target('image_300x250'))!
    const params = capability.entry.format.params
    expect(params).not.toHaveProperty('pixel_ratios')
    const accepted = pixelVectors.find((vector) => vector.id === 'backward-compatible-1x')!
    const undeclared2x = pixelVectors.find(
      (vector) => vector.id === '2x-rejected-when-density-is-undeclared',
    )!
    expect(accepted.params).toEqual({ width: params.width, height: params.height })
    expect(accepted.expected.valid).toBe(true)
    expect(undeclared2x.expected.valid).toBe(false)
    // A 2x source (undeclared density, so not acceptable as is) is refitted to the 1x logical size.
    const manifest = manifestOf(
      await build({
        idempotency_key: KEY,
        target_format_id: target('image_300x250'),
        creative_manifest: {
          format_kind: 'image',
          assets: {
            image_main: {
              asset_type: 'image',
              url: 'https://cdn.acme.example/2x.png',
              ...undeclared2x.asset,
            },
            landing_page_url: { asset_type: 'url', url: 'https://acme.example/' },
          },
        },
      }),
    )
    expect(manifest.assets.image_main).toMatchObject(accepted.asset)
    expect(manifest.assets.landing_page_url!.url).toBe('https://acme.example/')
  })

  it('renders an audio_hosted capability from a script', async () => {
    const manifest = manifestOf(
      await build({
        idempotency_key: KEY,
        target_format_id: target('audio_hosted_30s'),
        creative_manifest: {
          format_kind: 'audio_hosted',
          assets: { script: { asset_type: 'text', content: 'Premium gear for every adventure.' } },
        },
      }),
    )
    expect(manifest.format_kind).toBe('audio_hosted')
    expect(manifest.assets.audio_main).toMatchObject({ asset_type: 'audio', duration_ms: 30_000 })
  })

  it('rejects an unknown selector with FORMAT_NOT_SUPPORTED on target_format_id, correctable', async () => {
    const error = await buildCreative(
      { idempotency_key: KEY, message: 'x', target_format_id: target('unknown_takeover_generation') },
      ctx,
    ).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CreativeError)
    expect(error).toMatchObject({
      code: 'FORMAT_NOT_SUPPORTED',
      field: 'target_format_id',
      recovery: 'correctable',
    })
  })

  it('keeps one capability per catalog image and audio format', () => {
    const v1 = catalog.formats
      .map((format) => format.format_id.id)
      .filter((id) => /^display_\d+x\d+_image$|^audio_\d+s$/.test(id))
    expect(
      buildCapabilities(catalog)
        .map((capability) => capability.v1.format_id.id)
        .sort(),
    ).toEqual(v1.sort())
  })
})
