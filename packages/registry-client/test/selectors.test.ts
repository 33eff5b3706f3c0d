/**
 * The hand-written property selector type follows what the registry accepts: a selector without
 * `publisher_domain` (every publisher authorizing the agent), the `publisher_domains` fan-out, and `by_id` only
 * with one `publisher_domain`. The `@ts-expect-error` lines are checked by `tsc` (this folder is in the
 * package's tsconfig); the client sends each accepted shape unchanged.
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest'
import {
  createRegistryClient,
  type PublisherPropertySelector,
  type SelectorPublishers,
} from '../src/index.js'
import { startFakeRegistry, type FakeRegistry } from './fake-registry.js'

let registry: FakeRegistry
beforeAll(async () => {
  registry = await startFakeRegistry()
})
afterAll(() => registry.close())

describe('PublisherPropertySelector', () => {
  it('accepts no publisher, one publisher or a publisher_domains fan-out', () => {
    const everywhere = { selection_type: 'all' } as const
    const fanOut = {
      publisher_domains: ['a.example', 'b.example'],
      selection_type: 'by_tag',
      property_tags: ['news'],
    } as const satisfies PublisherPropertySelector
    expectTypeOf(everywhere).toExtend<PublisherPropertySelector>()
    expectTypeOf({
      publisher_domain: 'a.example',
      selection_type: 'by_id' as const,
      property_ids: ['p1'],
    }).toExtend<PublisherPropertySelector>()
    expectTypeOf<{ publisher_domains: string[] }>().toExtend<SelectorPublishers>()
    expect(fanOut.publisher_domains).toHaveLength(2)
  })

  it('rejects both publisher keys, by_id without publisher_domain and a missing id or tag list', () => {
    const rejected: PublisherPropertySelector[] = [
      // @ts-expect-error naming publisher_domain and publisher_domains is a 400 at the registry
      { publisher_domain: 'a.example', publisher_domains: ['b.example'], selection_type: 'all' },
      // @ts-expect-error by_id needs publisher_domain (property ids are publisher-scoped)
      { selection_type: 'by_id', property_ids: ['p1'] },
      // @ts-expect-error by_id cannot fan out
      { publisher_domains: ['a.example'], selection_type: 'by_id', property_ids: ['p1'] },
      // @ts-expect-error by_tag needs property_tags
      { publisher_domains: ['a.example'], selection_type: 'by_tag' },
    ]
    expect(rejected).toHaveLength(4)
  })

  it('is sent unchanged to expand and to product checks', async () => {
    const client = createRegistryClient({ baseUrl: registry.url })
    const selectors: PublisherPropertySelector[] = [
      { selection_type: 'all' },
      {
        publisher_domains: ['news.example', 'sport.example'],
        selection_type: 'by_tag',
        property_tags: ['news'],
      },
      { publisher_domain: 'news.example', selection_type: 'by_id', property_ids: ['home'] },
    ]
    await client.expandProductIdentifiers({
      agent_url: 'https://sales.example/mcp',
      publisher_properties: selectors,
    })
    expect(registry.requests.at(-1)!.body).toEqual({
      agent_url: 'https://sales.example/mcp',
      publisher_properties: selectors,
    })
  })
})
