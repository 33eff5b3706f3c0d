/**
 * The property catalog on SQLite and PostgreSQL, through `@adwire/registry-client` over real HTTP (answers
 * checked against the served and the upstream document): resolving identifiers to stable handles (lookup
 * reads, resolve contributes with provenance and is idempotent), browsing with a cursor and filters, syncing
 * since a watermark, and disputes (weak links suspended at once, strong claims queued, merges escalated).
 */
import type { RegistryClient } from '@adwire/registry-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientOf, startTestRegistry, type TestRegistry, refusal, testBackends } from './testing/registry.js'

const backends = await testBackends()

interface Resolved {
  resolved: Array<{
    identifier: { type: string; value: string }
    property_rid: string | null
    classification: string
    status: 'existing' | 'created' | 'excluded'
    source: string | null
  }>
  summary: { total: number; resolved: number; created: number; excluded: number; not_found: number }
  server_timestamp: string
}

interface BrowsePage {
  entries: Array<{
    property_rid: string
    property_id: string | null
    source: string
    status: string
    identifiers: Array<{ type: string; value: string }>
  }>
  total: number
  next_cursor: string | null
}

interface SyncPage {
  entries: Array<{ property_rid: string; updated_at: string; source: string; created_by: string | null }>
  server_timestamp: string
  next_cursor: string | null
}

describe.each(backends)('property catalog on %s', (name, backend) => {
  let test: TestRegistry
  let member: RegistryClient
  let anonymous: RegistryClient

  beforeAll(async () => {
    if (!backend) return
    test = await startTestRegistry(backend)
    member = clientOf(test.registry, (await test.registry.createOrg('Catalog Member')).apiKey)
    anonymous = clientOf(test.registry)
  })

  afterAll(async () => {
    if (!backend) return
    await test?.registry.close()
    await test?.cleanup()
  })

  const resolve = (client: RegistryClient, body: Record<string, unknown>) =>
    client.request<Resolved>('POST', '/api/registry/resolve', { body })
  const browse = (query: Record<string, string | number> = {}) =>
    anonymous.request<BrowsePage>('GET', '/api/registry/catalog', { query })
  const sync = (query: Record<string, string | number>) =>
    anonymous.request<SyncPage>('GET', '/api/registry/catalog/sync', { query })

  it.skipIf(!backend)(
    `resolves identifiers to stable handles, creating them with provenance (${name})`,
    async () => {
      const identifiers = [
        { type: 'domain', value: 'Pinecrest-News.example' },
        { type: 'domain', value: 'fresh-news.example' },
        { type: 'ios_bundle', value: 'com.fresh.news' },
        { type: 'domain', value: 'securepubads.doubleclick.net' },
      ]
      // Lookup is a pure read, open to anyone.
      const looked = await resolve(anonymous, {
        mode: 'lookup',
        identifiers,
        provenance: { type: 'agency_allowlist' },
      })
      expect(looked.summary).toEqual({ total: 4, resolved: 1, created: 0, excluded: 1, not_found: 2 })
      expect(looked.resolved[0]).toMatchObject({
        identifier: { type: 'domain', value: 'pinecrest-news.example' },
        status: 'existing',
        classification: 'property',
      })
      const declaredRid = looked.resolved[0]!.property_rid!
      expect(looked.resolved[1]).toMatchObject({ property_rid: null, status: 'excluded' })
      expect(looked.resolved[3]).toMatchObject({
        property_rid: null,
        status: 'excluded',
        classification: 'ad_infra',
      })

      // Resolve contributes, and needs a credential.
      expect(
        (await refusal(resolve(anonymous, { identifiers, provenance: { type: 'agency_allowlist' } })))
          .statusCode,
      ).toBe(401)
      const first = await resolve(member, {
        identifiers,
        provenance: { type: 'agency_allowlist', context: 'q3_allowlist' },
      })
      expect(first.summary).toEqual({ total: 4, resolved: 3, created: 2, excluded: 1, not_found: 0 })
      expect(first.resolved.map((entry) => entry.status)).toEqual([
        'existing',
        'created',
        'created',
        'excluded',
      ])
      expect(first.resolved[0]!.property_rid).toBe(declaredRid)
      expect(first.resolved[1]).toMatchObject({ source: 'agency_allowlist', classification: 'property' })
      // Idempotent on the mapping.
      const again = await resolve(member, { identifiers, provenance: { type: 'ssp_inventory' } })
      expect(again.resolved.map((entry) => entry.property_rid)).toEqual(
        first.resolved.map((entry) => entry.property_rid),
      )
      expect(again.summary.created).toBe(0)
      // Additive on activity: the fresh domain has now been resolved twice.
      const busy = await browse({ min_resolves: 2, search: 'fresh-news.example' })
      expect(busy.entries.map((entry) => entry.property_rid)).toEqual([first.resolved[1]!.property_rid])
      expect(busy.entries[0]!.identifiers).toEqual([{ type: 'domain', value: 'fresh-news.example' }])
      expect((await browse({ min_resolves: 3, search: 'fresh-news.example' })).total).toBe(0)
      expect((await browse({ active_since: '2999-01-01T00:00:00Z' })).total).toBe(0)

      for (const body of [
        { identifiers: [{ type: 'fax_number', value: '123' }], provenance: { type: 'agency_allowlist' } },
        { identifiers: [{ type: 'domain', value: 'xn--zz.com' }], provenance: { type: 'agency_allowlist' } },
        { identifiers: [{ type: 'domain', value: 'ok.example' }], provenance: { type: 'crawl' } },
        { identifiers: [{ type: 'domain', value: 'ok.example' }], provenance: { type: 'rumour' } },
        { identifiers: [], provenance: { type: 'agency_allowlist' } },
        {
          identifiers: Array.from({ length: 10_001 }, (_, i) => ({ type: 'domain', value: `d${i}.example` })),
          provenance: { type: 'agency_allowlist' },
        },
      ]) {
        expect((await refusal(resolve(member, body))).statusCode).toBe(400)
      }
    },
  )

  it.skipIf(!backend)(`gives concurrent resolves of one new identifier one handle (${name})`, async () => {
    const identifiers = [
      { type: 'domain', value: 'race.example' },
      { type: 'roku_store_id', value: 'race-channel' },
    ]
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => resolve(member, { identifiers, provenance: { type: 'data_partner' } })),
    )
    for (const index of [0, 1]) {
      const rids = new Set(answers.map((answer) => answer.resolved[index]!.property_rid))
      expect(rids.size).toBe(1)
      expect(answers.filter((answer) => answer.resolved[index]!.status === 'created')).toHaveLength(1)
    }
    const listed = await browse({ search: 'race' })
    expect(listed.total).toBe(2)
  })

  it.skipIf(!backend)(`browses the catalog with an opaque cursor and filters (${name})`, async () => {
    const all = await browse({ limit: 1000 })
    expect(all.next_cursor).toBeNull()
    expect(all.entries.length).toBe(all.total)
    // The demo publishers' declared properties are part of the catalog.
    expect(
      all.entries.some((entry) => entry.source !== 'agency_allowlist' && entry.property_id !== null),
    ).toBe(true)
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const page: BrowsePage = await browse({ limit: 2, ...(cursor ? { cursor } : {}) })
      expect(page.entries.length).toBeLessThanOrEqual(2)
      expect(page.total).toBe(all.total)
      seen.push(...page.entries.map((entry) => entry.property_rid))
      cursor = page.next_cursor
    } while (cursor)
    expect(seen).toEqual(all.entries.map((entry) => entry.property_rid))
    const apps = await browse({ identifier_type: 'ios_bundle' })
    expect(apps.entries.map((entry) => entry.identifiers[0]!.value)).toEqual(['com.fresh.news'])
    expect((await browse({ source: 'agency_allowlist' })).total).toBe(2)
    const badBrowses: Array<Record<string, string | number>> = [
      { cursor: 'not-a-cursor' },
      { limit: 0 },
      { limit: 1001 },
      { min_resolves: 'lots' },
      { active_since: 'soon' },
    ]
    for (const query of badBrowses) {
      expect((await refusal(browse(query))).statusCode).toBe(400)
    }
  })

  it.skipIf(!backend)(`syncs changes since a watermark (${name})`, async () => {
    const full = await sync({ since: '1970-01-01T00:00:00Z' })
    expect(full.entries.length).toBeGreaterThan(0)
    expect(full.next_cursor).toBeNull()
    expect(full.server_timestamp).toBe(full.entries[full.entries.length - 1]!.updated_at)
    expect((await sync({ since: full.server_timestamp })).entries).toEqual([])

    const batch = Array.from({ length: 5 }, (_, i) => ({ type: 'domain', value: `sync-${i}.example` }))
    const created = await resolve(member, { identifiers: batch, provenance: { type: 'deal_history' } })
    // Five entries of one instant and a page of two: the instant is delivered whole, the watermark moves on.
    const page = await sync({ since: full.server_timestamp, limit: 2 })
    expect(page.entries.map((entry) => entry.property_rid).sort()).toEqual(
      created.resolved.map((entry) => entry.property_rid).sort(),
    )
    expect(page.entries[0]).toMatchObject({ source: 'deal_history' })
    expect(page.entries[0]!.created_by).toBeTruthy()
    const rest = await sync({ since: page.server_timestamp, limit: 2 })
    expect(rest.entries).toEqual([])
    expect(rest.next_cursor).toBeNull()

    // Pages of distinct instants end before the last one, so nothing is skipped.
    await resolve(member, {
      identifiers: [{ type: 'domain', value: 'later-1.example' }],
      provenance: { type: 'deal_history' },
    })
    await new Promise((resolve) => setTimeout(resolve, 5))
    await resolve(member, {
      identifiers: [{ type: 'domain', value: 'later-2.example' }],
      provenance: { type: 'deal_history' },
    })
    const one = await sync({ since: rest.server_timestamp, limit: 1 })
    expect(one.entries).toHaveLength(1)
    expect(one.next_cursor).toBe(one.server_timestamp)
    const two = await sync({ since: one.server_timestamp, limit: 1 })
    expect(two.entries).toHaveLength(1)
    expect(two.entries[0]!.property_rid).not.toBe(one.entries[0]!.property_rid)

    const badSyncs: Array<Record<string, string | number>> = [
      {},
      { since: 'yesterday' },
      { since: '1970-01-01T00:00:00Z', limit: 10_001 },
    ]
    for (const query of badSyncs) {
      expect((await refusal(sync(query))).statusCode).toBe(400)
    }
  })

  it.skipIf(!backend)(
    `triages disputes: suspend weak links, queue strong ones, escalate merges (${name})`,
    async () => {
      await resolve(member, {
        identifiers: [{ type: 'android_package', value: 'com.weak.app' }],
        provenance: { type: 'member_assertion' },
      })
      await resolve(member, {
        identifiers: [{ type: 'domain', value: 'declared-by-publisher.example' }],
        provenance: { type: 'publisher_declaration' },
      })
      const file = (client: RegistryClient, body: Record<string, unknown>) =>
        client.request<{ dispute_id: string; action_taken: string; reason: string }>(
          'POST',
          '/api/registry/catalog/disputes',
          { body },
        )
      const claim = 'This app belongs to a different publisher entirely.'
      const weak = await file(member, {
        dispute_type: 'identifier_link',
        subject_type: 'identifier',
        subject_value: 'com.weak.app',
        claim,
        evidence: 'Store listing names another developer.',
      })
      expect(weak.action_taken).toBe('link_suspended')
      const record = await anonymous.request<Record<string, unknown>>(
        'GET',
        `/api/registry/catalog/disputes/${weak.dispute_id}`,
      )
      expect(record).toMatchObject({
        id: weak.dispute_id,
        dispute_type: 'identifier_link',
        subject_value: 'com.weak.app',
        claim,
        evidence: 'Store listing names another developer.',
        status: 'suspended',
      })
      // The suspended link no longer resolves.
      const after = await resolve(anonymous, {
        mode: 'lookup',
        identifiers: [{ type: 'android_package', value: 'com.weak.app' }],
        provenance: { type: 'agency_allowlist' },
      })
      expect(after.resolved[0]).toMatchObject({
        property_rid: null,
        status: 'excluded',
        classification: 'disputed',
      })

      for (const value of ['declared-by-publisher.example', 'pinecrest-news.example']) {
        const strong = await file(member, {
          dispute_type: 'identifier_link',
          subject_type: 'identifier',
          subject_value: value,
          claim,
        })
        expect(strong.action_taken).toBe('queued_for_review')
      }
      const rid = (await browse({ search: 'declared-by-publisher.example' })).entries[0]!.property_rid
      const merge = await file(member, {
        dispute_type: 'false_merge',
        subject_type: 'property_rid',
        subject_value: rid,
        claim,
      })
      expect(merge.action_taken).toBe('escalated')
      expect(
        await anonymous.request('GET', `/api/registry/catalog/disputes/${merge.dispute_id}`),
      ).toMatchObject({ status: 'escalated', subject_type: 'property_rid' })

      expect(
        await refusal(
          file(member, {
            dispute_type: 'identifier_link',
            subject_type: 'identifier',
            subject_value: 'nothing.example',
            claim,
          }),
        ),
      ).toMatchObject({ statusCode: 400, code: 'unknown_subject' })
      for (const body of [
        {
          dispute_type: 'identifier_link',
          subject_type: 'identifier',
          subject_value: 'com.weak.app',
          claim: 'too short',
        },
        { dispute_type: 'rumour', subject_type: 'identifier', subject_value: 'com.weak.app', claim },
        { subject_type: 'identifier', subject_value: 'com.weak.app', claim },
      ]) {
        expect((await refusal(file(member, body))).statusCode).toBe(400)
      }
      expect(
        (
          await refusal(
            file(anonymous, {
              dispute_type: 'identifier_link',
              subject_type: 'identifier',
              subject_value: 'x',
              claim,
            }),
          )
        ).statusCode,
      ).toBe(401)
      expect(
        await refusal(anonymous.request('GET', '/api/registry/catalog/disputes/unknown-id')),
      ).toMatchObject({
        statusCode: 404,
      })
    },
  )
})
