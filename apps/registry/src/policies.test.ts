/**
 * The policy registry on SQLite and PostgreSQL, through `@adwire/registry-client` over real HTTP (answers
 * checked against the served and the upstream document): browse with filters and facet stats, resolve (one,
 * pinned version, bulk), save with revisions and history, and the 409s for registry-curated, pending and
 * other organizations' policies.
 */
import type { RegistryClient } from '@adwire/registry-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientOf, startTestRegistry, type TestRegistry, refusal, testBackends } from './testing/registry.js'

const backends = await testBackends()

interface PolicyList {
  policies: Array<{ policy_id: string; category: string }>
  stats: { total: number; regulation: number; standard: number }
}

const brandSafety = {
  policy_id: 'acme_brand_safety',
  version: '1.0.0',
  name: 'Acme Brand Safety',
  category: 'standard',
  enforcement: 'should',
  policy: 'Ads must not appear next to content depicting graphic violence.',
  jurisdictions: ['US'],
  governance_domains: ['creative', 'property'],
  policy_categories: ['brand_safety'],
}

describe.each(backends)('policy registry on %s', (name, backend) => {
  let test: TestRegistry
  let owner: RegistryClient
  let other: RegistryClient
  let anonymous: RegistryClient

  beforeAll(async () => {
    if (!backend) return
    test = await startTestRegistry(backend, { seed: false })
    owner = clientOf(test.registry, (await test.registry.createOrg('Pinnacle Media')).apiKey)
    other = clientOf(test.registry, (await test.registry.createOrg('Other Org')).apiKey)
    anonymous = clientOf(test.registry)
  })

  afterAll(async () => {
    if (!backend) return
    await test?.registry.close()
    await test?.cleanup()
  })

  const list = (query: Record<string, string | number> = {}) =>
    anonymous.request<PolicyList>('GET', '/api/policies/registry', { query })
  const save = (client: RegistryClient, body: Record<string, unknown>) =>
    client.request<{ success: true; policy_id: string; revision_number: number }>(
      'POST',
      '/api/policies/save',
      {
        body,
      },
    )

  it.skipIf(!backend)(`browses the curated policies with filters and facets (${name})`, async () => {
    const all = await list()
    expect(all.stats).toEqual({ total: 3, regulation: 2, standard: 1 })
    expect(all.policies.map((policy) => policy.policy_id).sort()).toEqual([
      'alcohol_placement_standard',
      'coppa_children',
      'gdpr_consent',
    ])
    // A country inside a region alias matches the region's policy.
    expect((await list({ jurisdiction: 'DE' })).policies.map((policy) => policy.policy_id)).toEqual([
      'gdpr_consent',
    ])
    expect((await list({ category: 'standard' })).stats).toEqual({ total: 1, regulation: 0, standard: 1 })
    expect(
      (await list({ enforcement: 'must', domain: 'property' })).policies.map((p) => p.policy_id),
    ).toEqual(['coppa_children'])
    expect((await list({ policy_category: 'age_restricted' })).stats.total).toBe(1)
    expect((await list({ search: 'consent' })).policies.map((p) => p.policy_id)).toEqual(['gdpr_consent'])
    const page = await list({ limit: 1, offset: 1 })
    expect(page.policies).toHaveLength(1)
    expect(page.stats.total).toBe(3)
    const bad: Array<Record<string, string | number>> = [
      { category: 'law' },
      { limit: 1001 },
      { limit: 0 },
      { offset: -1 },
    ]
    for (const query of bad) {
      expect((await refusal(list(query))).statusCode).toBe(400)
    }
  })

  it.skipIf(!backend)(`resolves one, a pinned version, and many (${name})`, async () => {
    const gdpr = await anonymous.request<Record<string, unknown>>('GET', '/api/policies/resolve', {
      query: { policy_id: 'gdpr_consent' },
    })
    expect(gdpr).toMatchObject({
      policy_id: 'gdpr_consent',
      source_type: 'registry',
      review_status: 'approved',
    })
    expect(typeof gdpr.policy).toBe('string')
    expect(
      await anonymous.request('GET', '/api/policies/resolve', {
        query: { policy_id: 'gdpr_consent', version: '1.0.0' },
      }),
    ).toMatchObject({ version: '1.0.0' })
    expect(
      await anonymous.request('GET', '/api/policies/resolve', {
        query: { policy_id: 'gdpr_consent', version: '9.9.9' },
      }),
    ).toBeNull()
    expect(
      await refusal(anonymous.request('GET', '/api/policies/resolve', { query: { policy_id: 'nope' } })),
    ).toMatchObject({ statusCode: 404, code: 'policy_not_found' })
    expect((await refusal(anonymous.request('GET', '/api/policies/resolve'))).statusCode).toBe(400)
    const bulk = await anonymous.request<{ results: Record<string, { policy_id: string } | null> }>(
      'POST',
      '/api/policies/resolve/bulk',
      { body: { policy_ids: ['gdpr_consent', 'coppa_children', 'missing_policy'] } },
    )
    expect(bulk.results.gdpr_consent?.policy_id).toBe('gdpr_consent')
    expect(bulk.results.coppa_children?.policy_id).toBe('coppa_children')
    expect(bulk.results.missing_policy).toBeNull()
    for (const body of [
      { policy_ids: [] },
      { policy_ids: Array.from({ length: 101 }, (_, i) => `p${i}`) },
      {},
    ]) {
      expect(
        (await refusal(anonymous.request('POST', '/api/policies/resolve/bulk', { body }))).statusCode,
      ).toBe(400)
    }
  })

  it.skipIf(!backend)(`saves community policies with revisions and guards ownership (${name})`, async () => {
    expect(
      (await refusal(anonymous.request('POST', '/api/policies/save', { body: brandSafety }))).statusCode,
    ).toBe(401)
    const created = await save(owner, brandSafety)
    expect(created).toMatchObject({ success: true, policy_id: 'acme_brand_safety', revision_number: 1 })
    const updated = await save(owner, {
      ...brandSafety,
      version: '1.1.0',
      description: 'Now with a description',
    })
    expect(updated.revision_number).toBe(2)
    const resolved = await anonymous.request<Record<string, unknown>>('GET', '/api/policies/resolve', {
      query: { policy_id: 'acme_brand_safety' },
    })
    expect(resolved).toMatchObject({
      version: '1.1.0',
      description: 'Now with a description',
      source_type: 'community',
      review_status: 'approved',
      jurisdictions: ['US'],
      channels: null,
    })
    expect((await list({ search: 'acme' })).policies.map((p) => p.policy_id)).toEqual(['acme_brand_safety'])

    const history = await anonymous.request<{
      policy_id: string
      total: number
      revisions: Array<{ revision_number: number; editor_name: string; is_rollback: boolean }>
    }>('GET', '/api/policies/history', { query: { policy_id: 'acme_brand_safety' } })
    expect(history.total).toBe(2)
    expect(history.revisions.map((revision) => revision.revision_number)).toEqual([2, 1])
    expect(history.revisions[0]).toMatchObject({ editor_name: 'Pinnacle Media', is_rollback: false })
    const paged = await anonymous.request<{ revisions: unknown[] }>('GET', '/api/policies/history', {
      query: { policy_id: 'acme_brand_safety', limit: 1, offset: 1 },
    })
    expect(paged.revisions).toHaveLength(1)
    expect(
      await refusal(anonymous.request('GET', '/api/policies/history', { query: { policy_id: 'nope' } })),
    ).toMatchObject({ statusCode: 404 })
    expect(
      (
        await refusal(
          anonymous.request('GET', '/api/policies/history', {
            query: { policy_id: 'gdpr_consent', limit: 101 },
          }),
        )
      ).statusCode,
    ).toBe(400)

    // Someone else's community policy: 403 (the authorization layer); a registry-curated one and a pending one: 409.
    expect(await refusal(save(other, { ...brandSafety, name: 'Hijacked' }))).toMatchObject({
      statusCode: 403,
      code: 'policy_not_owned',
    })
    expect(await refusal(save(owner, { ...brandSafety, policy_id: 'gdpr_consent' }))).toMatchObject({
      statusCode: 409,
      code: 'policy_registry_sourced',
    })
    const at = new Date().toISOString()
    await test.registry.repository.policies.put(
      {
        ...(await test.registry.repository.policies.get('acme_brand_safety'))!,
        policy_id: 'pending_policy',
        review_status: 'pending',
        created_at: at,
        updated_at: at,
      },
      { editor_name: 'test', edit_summary: 'pending' },
      undefined,
    )
    expect(await refusal(save(owner, { ...brandSafety, policy_id: 'pending_policy' }))).toMatchObject({
      statusCode: 409,
      code: 'policy_pending_review',
    })
    // Pending policies are not listed.
    expect((await list({ search: 'pending_policy' })).stats.total).toBe(0)

    // Validation.
    for (const body of [
      { ...brandSafety, policy_id: 'Bad-Id' },
      { ...brandSafety, source_url: 'ftp://x.example/policy' },
      { ...brandSafety, effective_date: 'yesterday' },
      { ...brandSafety, category: 'law' },
      { ...brandSafety, name: '   ' },
      { policy_id: 'x' },
    ]) {
      expect((await refusal(save(owner, body))).statusCode).toBe(400)
    }
  })
})
