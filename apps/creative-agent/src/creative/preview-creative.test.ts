import { describe, expect, it } from 'vitest'
import { officialErrors } from '@adwire/conformance/official'
import { buildCreative } from './build-creative.js'
import type { CreativeContext } from './context.js'
import { CreativeError } from './errors.js'
import { previewCreative, PREVIEW_TTL_MS, type PreviewCreativeResponse } from './preview-creative.js'
import { createMemoryPreviewStore, renderPreview } from './preview-store.js'

const AGENT_URL = 'https://creative.adwire.example'
const now = new Date('2026-01-01T00:00:00Z')
const fid = (id: string) => ({ agent_url: AGENT_URL, id })
const manifest = {
  format_id: fid('display_300x250_image'),
  assets: {
    image: {
      asset_type: 'image',
      url: 'https://cdn.acme.example/mr.png?d={DEVICE_TYPE}',
      width: 300,
      height: 250,
      alt_text: 'Cold brew',
    },
    click_url: { asset_type: 'url', url: 'https://acme.example/?cb={CACHEBUSTER}&dev={DEVICE_TYPE}' },
  },
}
const fresh = (): CreativeContext => ({ agentUrl: AGENT_URL, now, previews: createMemoryPreviewStore() })

async function preview(input: unknown, context: CreativeContext): Promise<PreviewCreativeResponse> {
  const response = await previewCreative(input, context)
  expect(officialErrors('creative/preview-creative-response.json', response)).toEqual([])
  return response
}
const single = (response: PreviewCreativeResponse) => {
  if (response.response_type !== 'single') throw new Error('expected single')
  return response
}
const idOf = (url: string) => url.slice(`${AGENT_URL}/previews/`.length)

describe('preview_creative single', () => {
  it('returns a preview URL served by renderPreview until expires_at, and echoes context', async () => {
    const context = fresh()
    const response = single(
      await preview(
        { request_type: 'single', creative_manifest: manifest, context: { correlation_id: 'p-1' } },
        context,
      ),
    )
    expect(response.context).toEqual({ correlation_id: 'p-1' })
    expect(response.expires_at).toBe(new Date(now.getTime() + PREVIEW_TTL_MS).toISOString())
    const render = response.previews[0]!.renders[0]!
    expect(render).toMatchObject({
      output_format: 'url',
      role: 'primary',
      dimensions: { width: 300, height: 250 },
    })
    if (render.output_format !== 'url') throw new Error('url expected')
    expect(render.preview_url.startsWith(`${AGENT_URL}/previews/pv_`)).toBe(true)
    const served = renderPreview(
      idOf(render.preview_url),
      new Date(now.getTime() + PREVIEW_TTL_MS - 1),
      context.previews,
    )
    expect(served).toMatchObject({ status: 200, contentType: 'text/html; charset=utf-8' })
    if (served.status === 200)
      expect(served.html).toContain('src="https://cdn.acme.example/mr.png?d={DEVICE_TYPE}"')
    expect(
      renderPreview(idOf(render.preview_url), new Date(now.getTime() + PREVIEW_TTL_MS), context.previews),
    ).toEqual({ status: 404 })
    expect(renderPreview('pv_unknown', now, context.previews)).toEqual({ status: 404 })
  })

  it('renders one preview per input with its macros substituted, inline as html', async () => {
    const response = single(
      await preview(
        {
          request_type: 'single',
          format_id: fid('display_300x250_image'),
          creative_manifest: manifest,
          output_format: 'html',
          inputs: [
            { name: 'Mobile', macros: { DEVICE_TYPE: 'mobile', CACHEBUSTER: '42' } },
            { name: 'Desktop', macros: { DEVICE_TYPE: 'desktop' }, context_description: 'wide screen' },
          ],
        },
        fresh(),
      ),
    )
    expect(response.previews.map((p) => p.input.name)).toEqual(['Mobile', 'Desktop'])
    const [mobile, desktop] = response.previews.map((p) => p.renders[0]!)
    if (mobile?.output_format !== 'html' || desktop?.output_format !== 'html')
      throw new Error('html expected')
    expect(mobile.preview_html).toContain('mr.png?d=mobile')
    expect(mobile.preview_html).toContain('cb=42&amp;dev=mobile')
    expect(desktop.preview_html).toContain('mr.png?d=desktop')
    expect(desktop.preview_html).toContain('cb={CACHEBUSTER}')
    expect(response.previews[0]!.preview_id).not.toBe(response.previews[1]!.preview_id)
  })

  it('previews a generated creative (list → build → preview)', async () => {
    const built = await buildCreative(
      {
        idempotency_key: 'preview-flow-000001',
        target_format_id: fid('display_728x90_html'),
        creative_manifest: {
          format_id: fid('display_728x90_html'),
          assets: {
            promoted_offerings: {
              brand_manifest: { name: 'Acme', url: 'https://acme.example/', colors: { primary: '#123456' } },
              inline_offerings: [{ name: 'Big Sale' }],
            },
          },
        },
      },
      fresh(),
    )
    if (!('creative_manifest' in built)) throw new Error('single build expected')
    const response = single(
      await preview(
        { request_type: 'single', creative_manifest: built.creative_manifest, output_format: 'html' },
        fresh(),
      ),
    )
    const render = response.previews[0]!.renders[0]!
    if (render.output_format !== 'html') throw new Error('html expected')
    expect(render.preview_html).toContain('<iframe')
    expect(render.preview_html).toContain('Big Sale')
  })

  it('errors: bare string format_id (400), unknown format (404), manifest not meeting its format (422), variant', async () => {
    const context = fresh()
    const fail = (input: unknown) => previewCreative(input, context).catch((e: unknown) => e as CreativeError)
    expect(
      await fail({ request_type: 'single', format_id: 'display_300x250_image', creative_manifest: manifest }),
    ).toMatchObject({ code: 'INVALID_FORMAT_ID', status: 400, field: 'format_id' })
    expect(
      await fail({ request_type: 'single', creative_manifest: { ...manifest, format_id: 'x' } }),
    ).toMatchObject({ code: 'INVALID_FORMAT_ID', field: 'creative_manifest.format_id' })
    expect(
      await fail({ request_type: 'single', creative_manifest: { ...manifest, format_id: fid('nope') } }),
    ).toMatchObject({ code: 'FORMAT_NOT_SUPPORTED', status: 404, field: 'creative_manifest.format_id' })
    expect(
      await fail({
        request_type: 'single',
        creative_manifest: { ...manifest, assets: { click_url: manifest.assets.click_url } },
      }),
    ).toMatchObject({
      code: 'VALIDATION_ERROR',
      status: 422,
      field: 'creative_manifest.assets.image',
    })
    expect(await fail({ request_type: 'single' })).toMatchObject({ code: 'INVALID_REQUEST', status: 400 })
    expect(await fail({ request_type: 'variant', variant_id: 'v1' })).toMatchObject({
      code: 'UNSUPPORTED_FEATURE',
    })
  })
})

describe('preview_creative batch', () => {
  it('answers every request in order, with per-item failures', async () => {
    const context = fresh()
    const response = await preview(
      {
        request_type: 'batch',
        context: { correlation_id: 'b-1' },
        requests: [
          { creative_manifest: manifest },
          { creative_manifest: { ...manifest, format_id: fid('nope') } },
          {
            creative_manifest: manifest,
            output_format: 'html',
            inputs: [{ name: 'a', macros: { DEVICE_TYPE: 'ctv' } }],
            creative_id: 'cr_3',
          },
        ],
      },
      context,
    )
    if (response.response_type !== 'batch') throw new Error('batch expected')
    expect(response.context).toEqual({ correlation_id: 'b-1' })
    expect(response.results.map((r) => [r.success, r.creative_id])).toEqual([
      [true, 'request_1'],
      [false, 'request_2'],
      [true, 'cr_3'],
    ])
    const failed = response.results[1]!
    if (failed.success) throw new Error('failure expected')
    expect(failed.errors[0]).toMatchObject({
      code: 'FORMAT_NOT_SUPPORTED',
      field: 'requests[1].creative_manifest.format_id',
    })
    const third = response.results[2]!
    if (!third.success) throw new Error('success expected')
    const render = third.response.previews[0]!.renders[0]!
    expect(render.output_format === 'html' && render.preview_html.includes('d=ctv')).toBe(true)
  })

  it('renders identical items once and gives them the same preview', async () => {
    const response = await preview(
      {
        request_type: 'batch',
        requests: Array.from({ length: 10 }, () => ({ creative_manifest: manifest })),
      },
      fresh(),
    )
    if (response.response_type !== 'batch') throw new Error('batch expected')
    const ids = new Set(response.results.map((r) => (r.success ? r.response.previews[0]!.preview_id : '')))
    expect(ids.size).toBe(1)
  })

  it('rejects a bare string format_id inside the batch as INVALID_FORMAT_ID', async () => {
    await expect(
      previewCreative(
        { request_type: 'batch', requests: [{ format_id: 'x', creative_manifest: manifest }] },
        fresh(),
      ),
    ).rejects.toMatchObject({
      code: 'INVALID_FORMAT_ID',
      field: 'requests[0].format_id',
    })
  })

  it('measures a batch of 10 against 10 single calls (reported, not asserted)', async () => {
    const manifests = Array.from({ length: 10 }, (_, i) => ({
      ...manifest,
      assets: {
        ...manifest.assets,
        image: { ...manifest.assets.image, url: `https://cdn.acme.example/${i}.png` },
      },
    }))
    const rounds = 200
    const time = async (run: () => Promise<unknown>) => {
      for (let i = 0; i < 20; i++) await run()
      const start = performance.now()
      for (let i = 0; i < rounds; i++) await run()
      return (performance.now() - start) / rounds
    }
    const context = fresh()
    const batch = await time(() =>
      previewCreative(
        { request_type: 'batch', requests: manifests.map((m) => ({ creative_manifest: m })) },
        context,
      ),
    )
    const singles = await time(async () => {
      for (const m of manifests)
        await previewCreative({ request_type: 'single', creative_manifest: m }, context)
    })
    console.log(
      `preview batch of 10: ${batch.toFixed(3)} ms; 10 singles: ${singles.toFixed(3)} ms; ratio ${(singles / batch).toFixed(2)}x`,
    )
    expect(batch).toBeGreaterThan(0)
  })
})
