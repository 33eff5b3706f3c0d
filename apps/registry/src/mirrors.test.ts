/**
 * Community mirrors on SQLite and PostgreSQL, driven through `@adwire/registry-client` over real HTTP (every
 * answer checked against the served and the upstream document): contributor proposals, digest-bound review
 * (a stale digest is refused and publishes nothing), moderator publishing, catalog-only documents checked
 * against the official adagents.json schema, listing, fetching and deleting with `superseded_by`.
 */
import type { RegistryClient } from '@adwire/registry-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adagentsSchemaErrors } from './spec/adagents-schema.js'
import { clientOf, startTestRegistry, type TestRegistry, refusal, testBackends } from './testing/registry.js'

const backends = await testBackends()

const catalog = (name: string, domain: string) => ({
  catalog_etag: `etag-${name}`,
  properties: [
    {
      property_id: `${name.toLowerCase().replace(/[^a-z0-9]+/g, '_')}_site`,
      property_type: 'website',
      name,
      identifiers: [{ type: 'domain', value: domain }],
      publisher_domain: domain,
    },
  ],
})

interface Proposal {
  id: string
  proposal_digest: string
  status: string
  adagents_json: { authorized_agents: unknown[]; properties?: unknown[] }
}

describe.each(backends)('community mirrors on %s', (name, backend) => {
  let test: TestRegistry
  let moderator: RegistryClient
  let contributor: RegistryClient
  let other: RegistryClient
  let anonymous: RegistryClient

  beforeAll(async () => {
    if (!backend) return
    test = await startTestRegistry(backend)
    const mod = await test.registry.createOrg('Registry Moderators')
    await test.registry.repository.mirrors.grantModerator(mod.id, new Date().toISOString())
    moderator = clientOf(test.registry, mod.apiKey)
    contributor = clientOf(test.registry, (await test.registry.createOrg('Contributor')).apiKey)
    other = clientOf(test.registry, (await test.registry.createOrg('Someone Else')).apiKey)
    anonymous = clientOf(test.registry)
  })

  afterAll(async () => {
    if (!backend) return
    await test?.registry.close()
    await test?.cleanup()
  })

  const put = (client: RegistryClient, platform: string, body: unknown) =>
    client.request<Record<string, unknown>>('PUT', `/api/registry/mirrors/${platform}`, { body })
  const proposalOf = async (client: RegistryClient, id: string) =>
    (await client.request<{ proposal: Proposal }>('GET', `/api/registry/mirror-proposals/${id}`)).proposal

  it.skipIf(!backend)(
    `turns a contributor's PUT into a proposal a moderator approves (${name})`,
    async () => {
      const submitted = await put(contributor, 'example_platform', {
        ...catalog('Example Video', 'video.example'),
        // Never stored: a mirror asserts no sales authorization.
        authorized_agents: [{ url: 'https://sales.example/mcp', authorized_for: 'all' }],
      })
      expect(submitted).toMatchObject({ success: true, status: 'pending', platform: 'example_platform' })
      expect(submitted.status_url).toBe(`/api/registry/mirror-proposals/${String(submitted.proposal_id)}`)
      // Nothing public yet.
      expect(await refusal(anonymous.request('GET', '/api/registry/mirrors/example_platform'))).toMatchObject(
        { statusCode: 404, code: 'mirror_not_found' },
      )

      const proposal = await proposalOf(contributor, String(submitted.proposal_id))
      expect(proposal.adagents_json.authorized_agents).toEqual([])
      expect(adagentsSchemaErrors(proposal.adagents_json)).toEqual([])
      expect(proposal.proposal_digest).toBe(submitted.proposal_digest)
      // Another organization does not see it; a moderator does.
      expect(await refusal(proposalOf(other, proposal.id))).toMatchObject({ statusCode: 404 })
      expect((await proposalOf(moderator, proposal.id)).id).toBe(proposal.id)

      // A contributor cannot review, and the queue is for moderators.
      expect(
        await refusal(
          contributor.request('POST', `/api/registry/mirror-proposals/${proposal.id}/approve`, {
            body: { proposal_digest: proposal.proposal_digest },
          }),
        ),
      ).toMatchObject({ statusCode: 403, code: 'moderator_required' })
      expect(
        await refusal(
          contributor.request('GET', '/api/registry/mirror-proposals', { query: { review_queue: 'true' } }),
        ),
      ).toMatchObject({ statusCode: 403 })
      const mine = await contributor.request<{ proposals: Proposal[]; total: number }>(
        'GET',
        '/api/registry/mirror-proposals',
      )
      expect(mine.proposals.map((item) => item.id)).toEqual([proposal.id])
      expect((await other.request<{ total: number }>('GET', '/api/registry/mirror-proposals')).total).toBe(0)
      const queue = await moderator.request<{ proposals: Proposal[] }>(
        'GET',
        '/api/registry/mirror-proposals',
        {
          query: { review_queue: 'true' },
        },
      )
      expect(queue.proposals.map((item) => item.id)).toContain(proposal.id)

      const approved = await moderator.request<Record<string, unknown>>(
        'POST',
        `/api/registry/mirror-proposals/${proposal.id}/approve`,
        {
          body: {
            proposal_digest: proposal.proposal_digest,
            review_notes: 'Checked against the platform docs',
          },
        },
      )
      expect(approved).toMatchObject({
        success: true,
        platform: 'example_platform',
        proposal_id: proposal.id,
        catalog_etag: 'etag-Example Video',
        publisher_domains: ['video.example'],
        superseded_by: null,
      })
      const mirror = await anonymous.request<{ adagents_json: Record<string, unknown> }>(
        'GET',
        '/api/registry/mirrors/example_platform',
      )
      expect(mirror.adagents_json.authorized_agents).toEqual([])
      expect(mirror.adagents_json.$schema).toBe('https://adcontextprotocol.org/schemas/3.1.19/adagents.json')
      expect(adagentsSchemaErrors(mirror.adagents_json)).toEqual([])
      expect((await proposalOf(contributor, proposal.id)).status).toBe('approved')
      // A second review of the same revision is refused.
      expect(
        await refusal(
          moderator.request('POST', `/api/registry/mirror-proposals/${proposal.id}/reject`, {
            body: { proposal_digest: proposal.proposal_digest, review_notes: 'too late' },
          }),
        ),
      ).toMatchObject({ statusCode: 409, code: 'proposal_already_reviewed' })
      // The mirror's property is in the property catalog, linked to its domain.
      const resolved = await anonymous.request<{
        resolved: Array<{ property_rid: string | null; source: string }>
      }>('POST', '/api/registry/resolve', {
        body: {
          mode: 'lookup',
          identifiers: [{ type: 'domain', value: 'video.example' }],
          provenance: { type: 'member_assertion' },
        },
      })
      expect(resolved.resolved[0]).toMatchObject({ source: 'community_mirror' })
      expect(resolved.resolved[0]!.property_rid).toMatch(/^[0-9a-f-]{36}$/)
    },
  )

  it.skipIf(!backend)(`refuses a review with a stale digest and publishes nothing (${name})`, async () => {
    const first = await put(contributor, 'stale_platform', catalog('First', 'first.example'))
    // The contributor refreshes the pending proposal: same id, new digest.
    const second = await put(contributor, 'stale_platform', catalog('Second', 'second.example'))
    expect(second.proposal_id).toBe(first.proposal_id)
    expect(second.proposal_digest).not.toBe(first.proposal_digest)
    const id = String(first.proposal_id)
    for (const action of ['approve', 'reject'] as const) {
      expect(
        await refusal(
          moderator.request('POST', `/api/registry/mirror-proposals/${id}/${action}`, {
            body: { proposal_digest: first.proposal_digest, review_notes: 'reviewed the first revision' },
          }),
        ),
      ).toMatchObject({ statusCode: 409, code: 'proposal_digest_mismatch' })
    }
    expect((await proposalOf(moderator, id)).status).toBe('pending')
    expect(await refusal(anonymous.request('GET', '/api/registry/mirrors/stale_platform'))).toMatchObject({
      statusCode: 404,
    })

    // The public mirror moves on under the proposal (a moderator publishes directly): its base is stale.
    const published = await put(moderator, 'stale_platform', catalog('Direct', 'direct.example'))
    expect(published).toMatchObject({ success: true, publisher_domains: ['direct.example'] })
    expect(
      await refusal(
        moderator.request('POST', `/api/registry/mirror-proposals/${id}/approve`, {
          body: { proposal_digest: second.proposal_digest },
        }),
      ),
    ).toMatchObject({ statusCode: 409, code: 'base_mirror_stale' })
    const mirror = await anonymous.request<{ catalog_etag: string }>(
      'GET',
      '/api/registry/mirrors/stale_platform',
    )
    expect(mirror.catalog_etag).toBe('etag-Direct')

    // Rejecting the current revision needs notes and works.
    expect(
      await refusal(
        moderator.request('POST', `/api/registry/mirror-proposals/${id}/reject`, {
          body: { proposal_digest: second.proposal_digest },
        }),
      ),
    ).toMatchObject({ statusCode: 400 })
    const rejected = await moderator.request<{ proposal: Proposal & { review_notes: string } }>(
      'POST',
      `/api/registry/mirror-proposals/${id}/reject`,
      { body: { proposal_digest: second.proposal_digest, review_notes: 'Superseded by the direct publish' } },
    )
    expect(rejected.proposal).toMatchObject({
      status: 'rejected',
      review_notes: 'Superseded by the direct publish',
    })
    const rejectedList = await contributor.request<{ proposals: Proposal[] }>(
      'GET',
      '/api/registry/mirror-proposals',
      {
        query: { status: 'rejected' },
      },
    )
    expect(rejectedList.proposals.map((item) => item.id)).toEqual([id])
  })

  it.skipIf(!backend)(
    `publishes a proposal once when two moderators approve it together (${name})`,
    async () => {
      const submitted = await put(contributor, 'race_platform', catalog('Race', 'race-mirror.example'))
      const approve = () =>
        moderator.request('POST', `/api/registry/mirror-proposals/${String(submitted.proposal_id)}/approve`, {
          body: { proposal_digest: submitted.proposal_digest },
        })
      const outcomes = await Promise.allSettled([approve(), approve(), approve()])
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1)
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') {
          expect(outcome.reason).toMatchObject({ statusCode: 409, code: 'proposal_already_reviewed' })
        }
      }
      expect(
        (await anonymous.request<{ catalog_etag: string }>('GET', '/api/registry/mirrors/race_platform'))
          .catalog_etag,
      ).toBe('etag-Race')
    },
  )

  it.skipIf(!backend)(`validates bodies, ids and limits as the document says (${name})`, async () => {
    // No catalog array at all, an empty one, a non-https successor: request validation.
    for (const body of [
      { catalog_etag: 'x' },
      { formats: [] },
      { ...catalog('A', 'a.example'), superseded_by: 'http://a.example/x' },
    ]) {
      const refused = await refusal(put(contributor, 'bad_platform', body))
      expect(refused.statusCode).toBe(400)
    }
    // Passes the request schema but not the adagents.json schema (a property without identifiers).
    const invalid = await refusal(
      put(contributor, 'bad_platform', { properties: [{ property_type: 'website', name: 'No ids' }] }),
    )
    expect(invalid).toMatchObject({ statusCode: 400, code: 'adagents_schema_invalid' })
    expect(await refusal(put(contributor, 'Bad Platform!', catalog('A', 'a.example')))).toMatchObject({
      statusCode: 400,
    })
    expect(await refusal(anonymous.request('GET', '/api/registry/mirrors/Bad%20Platform'))).toMatchObject({
      statusCode: 400,
    })
    expect(
      await refusal(anonymous.request('PUT', '/api/registry/mirrors/x', { body: catalog('A', 'a.example') })),
    ).toMatchObject({ statusCode: 401 })
    // Contributor limits: 2,000 catalog items.
    const formats = Array.from({ length: 2001 }, (_, index) => ({
      format_id: { agent_url: 'https://c.example', id: `f${index}` },
    }))
    expect(await refusal(put(contributor, 'big_platform', { formats }))).toMatchObject({
      statusCode: 413,
      code: 'too_many_catalog_items',
    })
    // …and 1 MiB.
    const heavy = Array.from({ length: 1200 }, (_, index) => ({ id: `f${index}`, notes: 'x'.repeat(1000) }))
    expect(await refusal(put(contributor, 'big_platform', { formats: heavy }))).toMatchObject({
      statusCode: 413,
      code: 'payload_too_large',
    })
    expect(
      await refusal(
        moderator.request('POST', '/api/registry/mirror-proposals/not-a-uuid/approve', {
          body: { proposal_digest: 'a'.repeat(64) },
        }),
      ),
    ).toMatchObject({ statusCode: 400 })
    expect(
      await refusal(
        moderator.request('POST', `/api/registry/mirror-proposals/${crypto.randomUUID()}/approve`, {
          body: { proposal_digest: 'a'.repeat(64) },
        }),
      ),
    ).toMatchObject({ statusCode: 404 })
    expect(
      await refusal(
        moderator.request('POST', `/api/registry/mirror-proposals/${crypto.randomUUID()}/approve`, {
          body: { proposal_digest: 'not-a-digest' },
        }),
      ),
    ).toMatchObject({ statusCode: 400 })
    expect(
      await refusal(
        contributor.request('GET', '/api/registry/mirror-proposals', { query: { status: 'nope' } }),
      ),
    ).toMatchObject({ statusCode: 400 })
    expect(
      await refusal(contributor.request('GET', '/api/registry/mirror-proposals', { query: { limit: 51 } })),
    ).toMatchObject({ statusCode: 400 })
    // The mirror list clamps as documented.
    const listed = await anonymous.request<{ mirrors: unknown[]; total: number }>(
      'GET',
      '/api/registry/mirrors',
      {
        query: { limit: 9999, offset: -5 },
      },
    )
    expect(listed.mirrors.length).toBe(listed.total)
    expect(
      await refusal(anonymous.request('GET', '/api/registry/mirrors', { query: { limit: 'many' } })),
    ).toMatchObject({
      statusCode: 400,
    })
  })

  it.skipIf(!backend)(`deletes a mirror only once superseded, or with force (${name})`, async () => {
    await put(moderator, 'retiring', catalog('Retiring', 'retiring.example'))
    const rid = async () =>
      (
        await anonymous.request<{ entries: Array<{ property_rid: string; status: string }> }>(
          'GET',
          '/api/registry/catalog',
          { query: { search: 'retiring.example' } },
        )
      ).entries
    expect((await rid()).map((entry) => entry.status)).toEqual(['active'])
    expect(await refusal(contributor.request('DELETE', '/api/registry/mirrors/retiring'))).toMatchObject({
      statusCode: 403,
    })
    expect(await refusal(moderator.request('DELETE', '/api/registry/mirrors/retiring'))).toMatchObject({
      statusCode: 409,
      code: 'mirror_not_superseded',
    })
    await put(moderator, 'retiring', {
      ...catalog('Retiring', 'retiring.example'),
      superseded_by: 'https://retiring.example/.well-known/adagents.json',
    })
    const listed = await anonymous.request<{
      mirrors: Array<{ platform: string; superseded_by: string | null }>
    }>('GET', '/api/registry/mirrors')
    expect(listed.mirrors.find((mirror) => mirror.platform === 'retiring')?.superseded_by).toBe(
      'https://retiring.example/.well-known/adagents.json',
    )
    expect(await moderator.request('DELETE', '/api/registry/mirrors/retiring')).toEqual({
      success: true,
      platform: 'retiring',
    })
    expect(await refusal(anonymous.request('GET', '/api/registry/mirrors/retiring'))).toMatchObject({
      statusCode: 404,
    })
    expect(await refusal(moderator.request('DELETE', '/api/registry/mirrors/retiring'))).toMatchObject({
      statusCode: 404,
    })
    // Its derived catalog row is retired, not left active.
    const after = await anonymous.request<{ entries: Array<{ status: string }> }>(
      'GET',
      '/api/registry/catalog',
      {
        query: { status: 'retired' },
      },
    )
    expect(after.entries.length).toBeGreaterThanOrEqual(1)

    await put(moderator, 'forced', catalog('Forced', 'forced.example'))
    expect(
      await refusal(
        moderator.request('DELETE', '/api/registry/mirrors/forced', { query: { force: 'maybe' } }),
      ),
    ).toMatchObject({ statusCode: 400 })
    expect(
      await moderator.request('DELETE', '/api/registry/mirrors/forced', { query: { force: 'true' } }),
    ).toMatchObject({ success: true })
  })
})
