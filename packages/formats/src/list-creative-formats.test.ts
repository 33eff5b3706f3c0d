import { describe, expect, it } from 'vitest'
import { officialErrors } from '@adwire/conformance/official'
import { standardCatalog } from './catalog.js'
import { FormatsError } from './errors.js'
import {
  listCreativeFormats,
  type ListCreativeFormatsOptions,
  type ListCreativeFormatsResponse,
} from './list-creative-formats.js'

const AGENT_URL = 'https://creative.adwire.example'
const ctx: ListCreativeFormatsOptions = { agentUrl: AGENT_URL }
const all = standardCatalog(AGENT_URL).formats

async function list(input: Record<string, unknown>, context = ctx): Promise<ListCreativeFormatsResponse> {
  const response = await listCreativeFormats(input, context)
  expect(officialErrors('creative/list-creative-formats-response.json', response)).toEqual([])
  return response
}
const ids = (response: ListCreativeFormatsResponse) => response.formats.map((format) => format.format_id.id)

describe('list_creative_formats', () => {
  it('lists the first page of the whole catalog with total_count, and echoes context', async () => {
    const response = await list({
      context: { correlation_id: 'c-1', nested: { a: [1] } },
      idempotency_key: 'x',
    })
    expect(response.formats.length).toBe(Math.min(50, all.length))
    expect(response.pagination.total_count).toBe(all.length)
    expect(response.context).toEqual({ correlation_id: 'c-1', nested: { a: [1] } })
    expect(response.creative_agents).toBeUndefined()
  })

  it('filters by format_ids (object form, trailing slash tolerated, other agents excluded)', async () => {
    const response = await list({
      format_ids: [
        { agent_url: `${AGENT_URL}/`, id: 'display_728x90_image' },
        { agent_url: 'https://other.example', id: 'display_300x250_image' },
      ],
    })
    expect(ids(response)).toEqual(['display_728x90_image'])
  })

  it('filters by type', async () => {
    for (const type of ['display', 'video', 'audio', 'dooh'] as const) {
      const response = await list({ type, pagination: { max_results: 100 } })
      expect(response.formats.length).toBeGreaterThan(0)
      expect(response.formats.every((format) => format.type === type)).toBe(true)
    }
  })

  it('filters by asset_types (any of them)', async () => {
    expect(ids(await list({ asset_types: ['vast'] }))).toEqual(['video_vast_30s'])
    const withHtmlOrDaast = ids(await list({ asset_types: ['html', 'daast'] }))
    expect(withHtmlOrDaast).toContain('audio_daast_30s')
    expect(withHtmlOrDaast).toContain('display_300x250_html')
  })

  it('filters by max/min width and height (fixed-size formats only)', async () => {
    const small = await list({ type: 'display', max_width: 320, max_height: 100 })
    expect(ids(small).sort()).toEqual(
      [
        'display_300x50_image',
        'display_320x100_image',
        'display_320x50',
        'display_320x50_generative',
        'display_320x50_html',
        'display_320x50_image',
      ].sort(),
    )
    expect(small.formats[0]?.renders?.[0]?.dimensions?.width).toBeLessThanOrEqual(320)
    const big = await list({ min_width: 1900, min_height: 1000 })
    expect(big.formats.length).toBeGreaterThan(0)
    expect(ids(big).every((id) => !id.includes('responsive'))).toBe(true)
  })

  it('filters by is_responsive', async () => {
    const responsive = ids(await list({ is_responsive: true }))
    expect(responsive.sort()).toEqual(
      ['display_responsive_html', 'display_responsive_image', 'native_in_feed'].sort(),
    )
    const fixed = ids(await list({ is_responsive: false, pagination: { max_results: 100 } }))
    expect(fixed).not.toContain('display_responsive_html')
    expect(fixed.length + responsive.length).toBe(all.length)
  })

  it('filters by name_search, case-insensitively', async () => {
    expect(ids(await list({ name_search: 'LEADERBOARD' })).sort()).toEqual(
      [
        'display_728x90',
        'display_728x90_generative',
        'display_728x90_html',
        'display_728x90_image',
        'display_970x90_image',
      ].sort(),
    )
    expect((await list({ name_search: 'no such thing' })).formats).toEqual([])
  })

  it('filters by wcag_level, disclosure positions and persistence', async () => {
    expect(
      (await list({ wcag_level: 'AA', pagination: { max_results: 100 } })).formats.every(
        (f) => f.type === 'display',
      ),
    ).toBe(true)
    expect((await list({ wcag_level: 'AAA' })).formats).toEqual([])
    expect(ids(await list({ disclosure_positions: ['prominent', 'footer'] }))).toEqual(['native_in_feed'])
    expect((await list({ disclosure_persistence: ['continuous'] })).formats).toEqual([])
  })

  it('filters by the deprecated input/output_format_ids', async () => {
    const catalog = standardCatalog(AGENT_URL).with([
      {
        format_id: { agent_url: AGENT_URL, id: 'seeded_transformer' },
        name: 'Seeded',
        input_format_ids: [{ agent_url: AGENT_URL, id: 'display_300x250_image' }],
      },
    ])
    const response = await list(
      { input_format_ids: [{ agent_url: AGENT_URL, id: 'display_300x250_image' }] },
      { ...ctx, catalog },
    )
    expect(ids(response)).toEqual(['seeded_transformer'])
    expect((await list({ output_format_ids: [{ agent_url: AGENT_URL, id: 'x' }] })).formats).toEqual([])
  })

  it('combines filters', async () => {
    const response = await list({ type: 'display', asset_types: ['html'], max_width: 300 })
    expect(ids(response).sort()).toEqual(
      [
        'display_160x600_html',
        'display_300x250',
        'display_300x250_generative',
        'display_300x250_html',
        'display_300x600_html',
      ].sort(),
    )
  })

  it('paginates with an opaque cursor until has_more is false, without duplicates or gaps', async () => {
    const seen: string[] = []
    let cursor: string | undefined
    let pages = 0
    do {
      const response = await list({ pagination: { max_results: 7, ...(cursor ? { cursor } : {}) } })
      pages++
      seen.push(...ids(response))
      expect(response.pagination.total_count).toBe(all.length)
      if (response.pagination.has_more) expect(response.pagination.cursor).toBeTypeOf('string')
      else expect(response.pagination.cursor).toBeUndefined()
      cursor = response.pagination.cursor
    } while (cursor)
    expect(pages).toBe(Math.ceil(all.length / 7))
    expect(seen).toEqual(all.map((format) => format.format_id.id))
  })

  it('walks the seeded two-format fixture of the pagination-integrity storyboard', async () => {
    const catalog = standardCatalog(AGENT_URL).with([
      {
        format_id: { agent_url: AGENT_URL, id: 'pagination_integrity_format_1' },
        name: 'Pagination Integrity Format A',
        type: 'display',
      },
      {
        format_id: { agent_url: AGENT_URL, id: 'pagination_integrity_format_2' },
        name: 'Pagination Integrity Format B',
        type: 'display',
      },
    ])
    const first = await list(
      { name_search: 'Pagination Integrity', pagination: { max_results: 1 } },
      { ...ctx, catalog },
    )
    expect(first.pagination).toMatchObject({ has_more: true, total_count: 2 })
    const second = await list(
      {
        name_search: 'Pagination Integrity',
        pagination: { max_results: 1, cursor: first.pagination.cursor },
      },
      { ...ctx, catalog },
    )
    expect(second.pagination).toEqual({ has_more: false, total_count: 2 })
    expect(ids(second)).toEqual(['pagination_integrity_format_2'])
  })

  it('rejects a cursor used with other filters, a forged cursor and max_results over 100', async () => {
    const first = await list({ type: 'display', pagination: { max_results: 2 } })
    await expect(
      listCreativeFormats(
        { type: 'video', pagination: { max_results: 2, cursor: first.pagination.cursor } },
        ctx,
      ),
    ).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'pagination.cursor',
      status: 400,
    })
    await expect(listCreativeFormats({ pagination: { cursor: 'garbage' } }, ctx)).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    })
    await expect(listCreativeFormats({ pagination: { max_results: 101 } }, ctx)).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      status: 400,
    })
  })

  it('rejects a bare string format_id with INVALID_FORMAT_ID (400) and bad input with INVALID_REQUEST', async () => {
    const error = await listCreativeFormats({ format_ids: ['display_300x250_image'] }, ctx).catch(
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(FormatsError)
    expect(FormatsError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_FORMAT_ID', status: 400, field: 'format_ids[0]' })
    await expect(listCreativeFormats({ type: 'print' }, ctx)).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'type',
      status: 400,
      recovery: 'correctable',
    })
    await expect(listCreativeFormats('nope', ctx)).rejects.toMatchObject({ code: 'INVALID_REQUEST' })
  })

  it('lists creative_agents when configured', async () => {
    const response = await list(
      {},
      {
        ...ctx,
        creativeAgents: [
          { agent_url: 'https://more.example/mcp', agent_name: 'More', capabilities: ['generation'] },
        ],
      },
    )
    expect(response.creative_agents).toEqual([
      { agent_url: 'https://more.example/mcp', agent_name: 'More', capabilities: ['generation'] },
    ])
  })
})
