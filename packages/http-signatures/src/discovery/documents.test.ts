import { describe, expect, it } from 'vitest'
import { documentHop } from './documents.js'

describe('documentHop', () => {
  it('reads an adagents.json pointer only when it declares no authorized_agents', () => {
    expect(documentHop('adagents', { authoritative_location: 'https://cdn.example/a.json' })).toEqual({
      kind: 'pointer',
      location: 'https://cdn.example/a.json',
    })
    expect(
      documentHop('adagents', {
        authoritative_location: 'https://cdn.example/a.json',
        authorized_agents: [],
      }),
    ).toEqual({ kind: 'data' })
    expect(documentHop('adagents', { authoritative_location: 42 })).toEqual({
      kind: 'invalid_pointer',
      message: 'authoritative_location is not a URL',
    })
    expect(documentHop('adagents', [1])).toEqual({ kind: 'data' })
  })

  it('reads brand.json authoritative_location and the house redirect', () => {
    expect(documentHop('brand_json', { authoritative_location: 'https://b.example/brand.json' })).toEqual({
      kind: 'pointer',
      location: 'https://b.example/brand.json',
    })
    expect(documentHop('brand_json', { house: 'holdco.example' })).toEqual({
      kind: 'pointer',
      location: 'https://holdco.example/.well-known/brand.json',
    })
    expect(documentHop('brand_json', { house: 'not a domain' })).toEqual({
      kind: 'invalid_pointer',
      message: 'house is not a domain name',
    })
    expect(documentHop('brand_json', { house: { domain: 'holdco.example' } })).toEqual({ kind: 'data' })
  })
})
