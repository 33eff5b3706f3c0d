import { ListCreativeFormatsRequestSchema, PreviewCreativeRequestSchema } from '@adwire/schemas'
import { describe, expect, it } from 'vitest'
import { AgentError } from './errors.js'
import { parseRequest, requestProblem } from './request-validation.js'

const refusal = (schema: Parameters<typeof parseRequest>[0], value: unknown): AgentError => {
  try {
    parseRequest(schema, value, 'test request')
  } catch (error) {
    if (AgentError.is(error)) return error
    throw error
  }
  throw new Error('accepted')
}

describe('parseRequest', () => {
  it('returns the parsed request', () => {
    expect(parseRequest(ListCreativeFormatsRequestSchema, { name_search: 'a' }, 'x')).toEqual({
      name_search: 'a',
    })
  })

  it('refuses with INVALID_REQUEST (400) naming the first offending field', () => {
    const error = refusal(ListCreativeFormatsRequestSchema, { pagination: { max_results: 500 } })
    expect(error).toMatchObject({ code: 'INVALID_REQUEST', status: 400, field: 'pagination.max_results' })
    expect(error.message).toMatch(/^invalid test request: pagination\.max_results: /)
    expect(error.toAdcpError()).toMatchObject({ code: 'INVALID_REQUEST', recovery: 'correctable' })
  })

  it('names the asset the one asset type checked refuses, and no field for the request itself', () => {
    const manifest = {
      format_id: { agent_url: 'https://creative.example', id: 'display_300x250_image' },
      assets: { image: { asset_type: 'image', url: 'https://cdn.example/a.png', width: 300 } },
    }
    const error = refusal(PreviewCreativeRequestSchema, {
      request_type: 'single',
      creative_manifest: manifest,
    })
    // A slot is an asset or a list of them (patternProperties): the field is the slot, the message says why.
    expect(error.field).toBe('creative_manifest.assets.image')
    expect(error.message).toContain('creative_manifest.assets.image: height: ')
    expect(refusal(PreviewCreativeRequestSchema, 'nope').field).toBeUndefined()
  })
})

describe('requestProblem', () => {
  it('is undefined for a valid request, else the field and message', () => {
    expect(requestProblem(ListCreativeFormatsRequestSchema, {}, 'x')).toBeUndefined()
    expect(requestProblem(ListCreativeFormatsRequestSchema, { format_ids: 'x' }, 'x')).toMatchObject({
      field: 'format_ids',
      message: expect.stringContaining('format_ids'),
    })
  })
})
