/**
 * The repository contract, run unchanged against SQLite (a real file) and PostgreSQL (a fresh schema, dropped
 * afterwards): snapshots and their feed events, authorization lookups, brands and revisions, member agents,
 * crawl requests, migrations that are idempotent.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dropSchema } from '../testing/registry.js'
import type { DatabaseConfig } from '../env.js'
import type { PublisherSnapshot } from '../domain/types.js'
import { openRepository, type RegistryRepository } from './repository.js'

const postgresUrl = await resolveTestPostgresUrl()
const folder = mkdtempSync(join(tmpdir(), 'adwire-registry-storage-'))
const schema = `registry_storage_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
const configs: Array<[string, DatabaseConfig | undefined]> = [
  ['sqlite', { kind: 'sqlite', path: join(folder, 'storage.sqlite') }],
  ['postgres', postgresUrl ? { kind: 'postgres', connectionString: postgresUrl, schema } : undefined],
]

afterAll(async () => {
  rmSync(folder, { recursive: true, force: true })
  if (postgresUrl) await dropSchema(postgresUrl, schema)
})

const T0 = Date.parse('2026-06-01T00:00:00Z')

function snapshot(
  agents: Array<{ url: string; ids: Array<string | null>; from?: string; until?: string }>,
  names = ['Home', 'Sport'],
): PublisherSnapshot {
  return {
    publisher: {
      domain: 'pub.test',
      source: 'adagents_json',
      valid: true,
      url: 'https://pub.test/.well-known/adagents.json',
      discovery_method: 'direct',
    },
    properties: names.map((name, index) => ({
      publisher_domain: 'pub.test',
      property_id: `p${index + 1}`,
      property_type: 'website',
      name,
      identifiers: [{ type: 'domain', value: `${name.toLowerCase()}.pub.test` }],
      tags: index === 0 ? ['news'] : ['sports'],
      source: 'adagents_json',
    })),
    authorizations: agents.flatMap((agent) =>
      agent.ids.map((id) => ({
        agent_url: agent.url,
        publisher_domain: 'pub.test',
        property_id: id,
        authorized_for: 'x',
        authorization_type: 'property_ids',
        evidence: 'adagents_json' as const,
        signing_keys: null,
        effective_from: agent.from ?? null,
        effective_until: agent.until ?? null,
        source_url: 'https://pub.test/.well-known/adagents.json',
      })),
    ),
  }
}

describe.each(configs)('registry storage on %s', (name, config) => {
  let repository: RegistryRepository
  beforeAll(async () => {
    if (!config) return
    repository = (await openRepository(config)).repository
  })
  afterAll(async () => {
    await repository?.close()
  })

  it.skipIf(!config)(`migrates idempotently (reopening keeps the data) (${name})`, async () => {
    await repository.brands.putBrand(
      {
        domain: 'b.test',
        id: 'b1',
        brand_name: 'B',
        source: 'hosted',
        verified: true,
        created_at: 'x',
        updated_at: 'x',
      },
      { editor_name: 'test', edit_summary: 'created' },
    )
    const again = await openRepository(config!)
    expect((await again.repository.brands.getBrand('b.test'))?.brand_name).toBe('B')
    await again.repository.close()
  })

  it.skipIf(!config)(`writes a snapshot and emits discovery events in UUIDv7 order (${name})`, async () => {
    const events = await repository.publishers.saveSnapshot(
      snapshot([{ url: 'https://a.test/mcp', ids: ['p1', 'p2'] }]),
      'test',
      T0,
    )
    expect(events.map((event) => event.event_type)).toEqual([
      'publisher.adagents_discovered',
      'property.created',
      'property.created',
      'authorization.granted',
      'agent.discovered',
    ])
    expect(events.map((event) => event.event_id)).toEqual([...events.map((event) => event.event_id)].sort())
    const again = await repository.publishers.saveSnapshot(
      snapshot([{ url: 'https://a.test/mcp', ids: ['p1', 'p2'] }]),
      'test',
      T0 + 1,
    )
    expect(again).toEqual([])
  })

  it.skipIf(!config)(
    `answers authorization lookups, publisher-wide rows and windows included (${name})`,
    async () => {
      const now = new Date(T0).toISOString()
      expect(
        await repository.authorizations.isAuthorizedForIdentifier(
          'https://a.test/mcp',
          'domain',
          'SPORT.pub.test',
          now,
        ),
      ).toBe(true)
      expect(
        await repository.authorizations.isAuthorizedForIdentifier(
          'https://b.test/mcp',
          'domain',
          'sport.pub.test',
          now,
        ),
      ).toBe(false)
      const events = await repository.publishers.saveSnapshot(
        snapshot([
          { url: 'https://a.test/mcp', ids: ['p1'] },
          { url: 'https://b.test/mcp', ids: [null], from: '2026-07-01T00:00:00Z' },
        ]),
        'test',
        T0 + 2,
      )
      expect(events.map((event) => event.event_type).sort()).toEqual([
        'agent.discovered',
        'authorization.granted',
        'authorization.modified',
        'publisher.adagents_changed',
      ])
      expect(
        await repository.authorizations.isAuthorizedForIdentifier(
          'https://a.test/mcp',
          'domain',
          'sport.pub.test',
          now,
        ),
      ).toBe(false)
      expect(
        await repository.authorizations.isAuthorizedForIdentifier(
          'https://b.test/mcp',
          'domain',
          'sport.pub.test',
          now,
        ),
      ).toBe(false)
      expect(
        await repository.authorizations.isAuthorizedForIdentifier(
          'https://b.test/mcp',
          'domain',
          'sport.pub.test',
          '2026-08-01T00:00:00.000Z',
        ),
      ).toBe(true)
      const expanded = await repository.authorizations.authorizedProperties(
        'https://b.test/mcp',
        'pub.test',
        '2026-08-01T00:00:00.000Z',
      )
      expect(expanded.map((property) => property.property_id)).toEqual(['p1', 'p2'])
      expect(await repository.authorizations.agentDomains('https://b.test/mcp')).toEqual(['pub.test'])
    },
  )

  it.skipIf(!config)(
    `emits revocation, property updates and agent removal, and keeps property ids stable (${name})`,
    async () => {
      const before = await repository.publishers.getProperties('pub.test')
      const events = await repository.publishers.saveSnapshot(
        snapshot([{ url: 'https://a.test/mcp', ids: ['p1'] }], ['Home', 'Sports']),
        'test',
        T0 + 3,
      )
      expect(events.map((event) => event.event_type).sort()).toEqual([
        'agent.removed',
        'authorization.revoked',
        'property.updated',
        'publisher.adagents_changed',
      ])
      const after = await repository.publishers.getProperties('pub.test')
      expect(after.map((property) => property.rid).sort()).toEqual(
        before.map((property) => property.rid).sort(),
      )
    },
  )

  it.skipIf(!config)(`pages the feed strictly after a cursor with type filters (${name})`, async () => {
    const all = await repository.feed.eventsAfter({ since: '2000-01-01T00:00:00Z', limit: 1000 })
    expect(all.length).toBeGreaterThan(8)
    const third = all[2]!.event_id
    const after = await repository.feed.eventsAfter({
      after: third,
      since: '2000-01-01T00:00:00Z',
      limit: 1000,
    })
    expect(after[0]!.event_id).toBe(all[3]!.event_id)
    const authorizations = await repository.feed.eventsAfter({
      since: '2000-01-01T00:00:00Z',
      filter: { exact: ['agent.removed'], prefixes: ['authorization.'] },
      limit: 1000,
    })
    expect(
      authorizations.every(
        (event) => event.event_type.startsWith('authorization.') || event.event_type === 'agent.removed',
      ),
    ).toBe(true)
    expect(authorizations.some((event) => event.event_type === 'agent.removed')).toBe(true)
    const underscore = await repository.feed.eventsAfter({
      since: '2000-01-01T00:00:00Z',
      filter: { exact: [], prefixes: ['publisher_'] },
      limit: 10,
    })
    expect(underscore).toEqual([])
  })

  it.skipIf(!config)(`keeps brands, revisions, member agents and crawl requests (${name})`, async () => {
    await repository.brands.putBrand(
      {
        domain: 'b.test',
        id: 'b1',
        brand_name: 'B2',
        source: 'community',
        verified: false,
        created_at: 'x',
        updated_at: 'y',
      },
      { editor_name: 'test', edit_summary: 'renamed' },
    )
    const history = await repository.brands.history('brand', 'b.test', 10, 0)
    expect(history.total).toBe(2)
    expect(history.revisions[0]!.revision_number).toBe(2)
    expect((await repository.brands.findBrands('b2', 5)).map((brand) => brand.domain)).toEqual(['b.test'])
    expect(
      await repository.members.putMemberAgent({
        org_id: 'o1',
        url: 'https://x.test/mcp',
        type: 'sales',
        visibility: 'private',
        created_at: 'x',
        updated_at: 'x',
      }),
    ).toEqual({ created: true })
    expect(
      await repository.members.putMemberAgent({
        org_id: 'o1',
        url: 'https://X.test/mcp/',
        type: 'buying',
        visibility: 'private',
        created_at: 'x',
        updated_at: 'y',
      }),
    ).toEqual({ created: false })
    expect((await repository.members.listMemberAgents('o1')).map((agent) => agent.type)).toEqual(['buying'])
    await repository.requests.createCrawlRequest({
      id: 'r1',
      domain: 'pub.test',
      status: 'queued',
      attempts: 0,
      max_attempts: 3,
      requested_by: null,
      requested_at: '2026-06-01T00:00:00Z',
      started_at: null,
      last_attempted_at: null,
      completed_at: null,
      next_attempt_at: null,
      last_error_code: null,
    })
    expect((await repository.requests.nextCrawlRequest('2026-06-02T00:00:00Z'))?.id).toBe('r1')
    await repository.requests.updateCrawlRequest('r1', { status: 'completed', attempts: 1 })
    expect(await repository.requests.nextCrawlRequest('2026-06-02T00:00:00Z')).toBeUndefined()
    expect((await repository.requests.counts()).publishers).toBe(1)
  })

  it.skipIf(!config)(
    `leases crawl requests: one claimer at a time, retries when due, a stopped registry's request back (${name})`,
    async () => {
      const request = (id: string, requestedAt: string, maxAttempts = 3) => ({
        id,
        domain: `${id}.test`,
        status: 'queued' as const,
        attempts: 0,
        max_attempts: maxAttempts,
        requested_by: null,
        requested_at: requestedAt,
        started_at: null,
        last_attempted_at: null,
        completed_at: null,
        next_attempt_at: null,
        last_error_code: null,
      })
      const { requests } = repository
      await requests.createCrawlRequest(request('lease1', '2026-07-01T00:00:00Z'))
      await requests.createCrawlRequest(request('lease2', '2026-07-01T00:00:01Z', 1))
      const t = (minute: number) => `2026-07-02T00:${String(minute).padStart(2, '0')}:00.000Z`
      const first = (await requests.claimCrawlRequest(t(0), t(5)))!
      const second = (await requests.claimCrawlRequest(t(0), t(5)))!
      expect([first.request.id, second.request.id]).toEqual(['lease1', 'lease2'])
      expect(first.request).toMatchObject({ status: 'running', attempts: 1, started_at: t(0) })
      expect(first.request).not.toHaveProperty('lease_until')
      expect(await requests.claimCrawlRequest(t(1), t(6))).toBeUndefined()
      // A transient failure: retrying, due at minute 10.
      expect(await requests.retryCrawlRequest('lease1', first.fence, t(10), 'fetch_failed')).toBe(true)
      expect(await requests.claimCrawlRequest(t(9), t(14))).toBeUndefined()
      const retried = (await requests.claimCrawlRequest(t(10), t(15)))!
      expect(retried.request).toMatchObject({ id: 'lease1', attempts: 2, last_error_code: 'fetch_failed' })
      // The earlier claim's fence no longer finishes it.
      expect(await requests.finishCrawlRequest('lease1', first.fence, 'completed', {})).toBe(false)
      // lease2's registry stopped at minute 0: past its lease it fails (one attempt allowed); lease1 renewed lives.
      expect(await requests.renewCrawlRequest('lease1', retried.fence, t(30))).toBe(true)
      expect(await requests.recoverCrawlRequests(t(20))).toEqual({ requeued: 0, failed: 1 })
      expect(await requests.getCrawlRequest('lease2')).toMatchObject({
        status: 'failed',
        last_error_code: 'internal_error',
      })
      expect(
        await requests.finishCrawlRequest('lease1', retried.fence, 'invalid', {
          completed_at: t(21),
          last_error_code: 'http_404',
        }),
      ).toBe(true)
      expect(await requests.getCrawlRequest('lease1')).toMatchObject({
        status: 'invalid',
        attempts: 2,
        completed_at: t(21),
        last_error_code: 'http_404',
      })
    },
  )

  it.skipIf(!config)(
    `lists a publisher's properties by type, name, id, the same from tuples as from keyed rows (${name})`,
    async () => {
      const domain = 'order.test'
      const property = (id: string, type: string, name: string) => ({
        publisher_domain: domain,
        property_id: id,
        property_type: type,
        name,
        identifiers: [{ type: 'domain', value: `${id}.${domain}` }],
        tags: [type],
        source: 'adagents_json' as const,
      })
      const grant = (id: string | null) => ({
        agent_url: 'https://order.test/mcp',
        publisher_domain: domain,
        property_id: id,
        authorized_for: 'x',
        authorization_type: 'property_ids',
        evidence: 'adagents_json' as const,
        signing_keys: null,
        effective_from: null,
        effective_until: null,
        source_url: null,
      })
      await repository.publishers.saveSnapshot(
        {
          publisher: { domain, source: 'adagents_json', valid: true, discovery_method: 'direct' },
          properties: [
            property('c', 'website', 'Beta'),
            property('a', 'mobile_app', 'Zeta'),
            property('b', 'website', 'Alpha'),
            property('d', 'website', 'Beta'),
          ],
          authorizations: [grant('b'), grant('c')],
        },
        'test',
        T0,
      )
      const listed = await repository.publishers.getProperties(domain)
      expect(listed.map((item) => item.property_id)).toEqual(['a', 'b', 'c', 'd'])
      expect(listed[0]).toMatchObject({
        publisher_domain: domain,
        property_type: 'mobile_app',
        name: 'Zeta',
        identifiers: [{ type: 'domain', value: `a.${domain}` }],
        tags: ['mobile_app'],
        source: 'adagents_json',
      })
      expect(listed[0]?.rid).toMatch(/\S/)
      const authorized = await repository.authorizations.authorizedProperties(
        'https://order.test/mcp',
        domain,
        new Date(T0).toISOString(),
      )
      expect(authorized).toEqual(listed.filter((item) => ['b', 'c'].includes(item.property_id)))
      const sql =
        'SELECT property_id, name FROM registry_properties WHERE publisher_domain = ? ORDER BY property_id'
      const keyed = await repository.driver.all<{ property_id: string; name: string }>(sql, [domain])
      const tuples = await repository.driver.tuples<[string, string]>(sql, [domain])
      expect(tuples).toEqual(keyed.map((row) => [row.property_id, row.name]))
    },
  )
})
