import { describe, expect, it } from 'vitest'
import { FormatSchema } from '@adwire/schemas'
import { officialErrors } from '@adwire/conformance/official'
import { FormatCatalog, standardCatalog } from './catalog.js'

const AGENT_URL = 'https://creative.adwire.example'

describe('standard catalog', () => {
  const catalog = standardCatalog(AGENT_URL)

  it('has at least 30 formats covering display, video, audio, dooh, native and responsive', () => {
    expect(catalog.formats.length).toBeGreaterThanOrEqual(30)
    const types = new Set(catalog.formats.map((format) => format.type))
    expect([...types].sort()).toEqual(['audio', 'display', 'dooh', 'video'])
    expect(catalog.formats.some((format) => format.format_id.id.startsWith('native_'))).toBe(true)
    expect(catalog.formats.some((format) => format.format_id.id.includes('responsive'))).toBe(true)
  })

  it('offers the composed and generative display units the compliance storyboards build', () => {
    for (const size of ['300x250', '728x90', '320x50']) {
      const composed = catalog.get({ agent_url: AGENT_URL, id: `display_${size}` })
      expect(composed?.assets?.map((asset) => (asset as { asset_id: string }).asset_id)).toEqual([
        'image',
        'headline',
        'click_url',
        'html',
        'impression_tracker',
      ])
      const generative = catalog.get({ agent_url: AGENT_URL, id: `display_${size}_generative` })
      expect(generative?.assets?.map((asset) => (asset as { asset_id: string }).asset_id)).toContain(
        'generated_image',
      )
    }
  })

  it('has unique ids and format_ids of {agent_url, id} with the configured URL', () => {
    const ids = catalog.formats.map((format) => format.format_id.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const format of catalog.formats) {
      expect(format.format_id).toEqual({ agent_url: AGENT_URL, id: format.format_id.id })
    }
  })

  it.each(standardCatalog(AGENT_URL).formats.map((format) => [format.format_id.id, format] as const))(
    '%s validates against the official core/format.json and FormatSchema',
    (_id, format) => {
      expect(officialErrors('core/format.json', format)).toEqual([])
      expect(FormatSchema.safeParse(format).success).toBe(true)
    },
  )

  it('looks formats up by format_id, ignoring a trailing slash but not another agent', () => {
    expect(catalog.get({ agent_url: `${AGENT_URL}/`, id: 'display_300x250_image' })?.name).toContain(
      '300x250',
    )
    expect(catalog.get({ agent_url: 'https://other.example', id: 'display_300x250_image' })).toBeUndefined()
    expect(catalog.get({ agent_url: AGENT_URL, id: 'nope' })).toBeUndefined()
  })

  it('is built once per agent URL', () => {
    expect(standardCatalog(AGENT_URL)).toBe(catalog)
    expect(standardCatalog('https://b.example').formats[0]?.format_id.agent_url).toBe('https://b.example')
  })

  it('rejects an agent URL that is not an absolute URI with a FormatsError', () => {
    expect(() => standardCatalog('creative.example')).toThrow(
      expect.objectContaining({
        name: 'FormatsError',
        code: 'INVALID_REQUEST',
        field: 'format_id.agent_url',
      }),
    )
  })

  it('accepts extra formats (replacing one with the same id) and rejects invalid ones', () => {
    const extra = catalog.with([
      { format_id: { agent_url: AGENT_URL, id: 'seeded_a' }, name: 'Seeded A', type: 'display' },
    ])
    expect(extra).toBeInstanceOf(FormatCatalog)
    expect(extra.formats.length).toBe(catalog.formats.length + 1)
    expect(() => catalog.with([{ name: 'no id' } as never])).toThrow(
      expect.objectContaining({ name: 'FormatsError', code: 'INVALID_REQUEST', status: 400 }),
    )
  })
})
