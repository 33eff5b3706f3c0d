/**
 * The contract sweep: every operation this service claims (IMPLEMENTED_OPERATIONS) is called at least once
 * against the demo world and its response is checked against the served OpenAPI document (the `api` helper
 * throws on any mismatch, including an undeclared status). `/openapi.json` and `/docs` are served.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { registryOpenApiFile } from '@adwire/adcp-data'
import {
  parseEnv as parseCreativeEnv,
  startCreativeAgent,
  type RunningCreativeAgent,
} from '@adwire/app-creative-agent'
import { Ajv } from 'ajv'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { createApp, IMPLEMENTED_OPERATIONS } from './app.js'
import { createCrawlQueue } from './crawl/queue.js'
import { TEST_CREDENTIALS_KEY } from './compliance/status-testing.js'
import { DEMO_AGENTS } from './seed.js'
import { addedStatuses, operations, REPLACED_SCHEMAS, upstreamDocument } from './spec/openapi.js'
import {
  api,
  readSse,
  startSite,
  startTestRegistry,
  type Site,
  type TestRegistry,
} from './testing/registry.js'

let test: TestRegistry
let site: Site
let key: string
let creative: RunningCreativeAgent
let creativeDir: string
const called = new Set<string>()
const ADMIN_KEY = `admin_${'c'.repeat(40)}`

beforeAll(async () => {
  site = await startSite()
  site.serveJson('/.well-known/adagents.json', {
    authoritative_location: `${site.origin}/hosted/adagents.json`,
  })
  site.serveJson('/hosted/adagents.json', {
    properties: [
      {
        property_id: 'x',
        property_type: 'website',
        name: 'X',
        identifiers: [{ type: 'domain', value: 'site.test' }],
      },
    ],
    authorized_agents: [
      {
        url: DEMO_AGENTS.network,
        authorized_for: 'all',
        authorization_type: 'property_ids',
        property_ids: ['x'],
      },
    ],
    last_updated: '2026-06-01T00:00:00Z',
  })
  // Our creative agent on 127.0.0.1: the live agent of the probing and compliance operations (it accepts the
  // test kit's key, which the runner presents by default), and the reference agent of compare.
  creativeDir = mkdtempSync(join(tmpdir(), 'adwire-contract-creative-'))
  creative = await startCreativeAgent(
    parseCreativeEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(creativeDir, 'creative.sqlite')}`,
      TOKENS: 'kit-buyer:demo-acme-outdoor-v1:read+write',
    }),
  )
  test = await startTestRegistry(
    { kind: 'sqlite' },
    {
      origins: { 'site.test': site.origin, 'community.example': site.origin },
      env: {
        AGENT_CREDENTIALS_KEY: TEST_CREDENTIALS_KEY,
        ALLOW_PRIVATE_AGENTS: '1',
        ADMIN_API_KEY: ADMIN_KEY,
        COMPLIANCE_REFERENCE_AGENT_URL: `${creative.url}/a2a`,
      },
      // The monitored agent on the test site answers MCP's initialize with another request's id, so every run
      // on it hangs a step until the step timeout: 5 s here (30 s by default), and more slots than the runs it
      // starts, so the runs on our creative agent never queue behind them.
      complianceRuns: { stepTimeoutMs: 5_000, concurrency: 4 },
    },
  )
  key = (await test.registry.createOrg('Contract')).apiKey
})

afterAll(async () => {
  await test?.registry.close()
  await test?.cleanup()
  await site?.close()
  await creative?.close()
  if (creativeDir) rmSync(creativeDir, { recursive: true, force: true })
})

const call = async (operationId: string, path: string, init: Parameters<typeof api>[3] = {}) => {
  called.add(operationId)
  return api(test.registry, operationId, path, init)
}

describe('contract sweep over the demo world', () => {
  it('answers every implemented operation with a response the document describes', async () => {
    const agent = encodeURIComponent(DEMO_AGENTS.network)
    const selector = {
      agent_url: DEMO_AGENTS.network,
      publisher_properties: [{ publisher_domain: 'pinecrest-news.example', selection_type: 'all' }],
    }
    expect((await call('resolveBrand', '/api/brands/resolve?domain=acme-outdoor.example')).status).toBe(200)
    expect(
      (
        await call('resolveBrandsBulk', '/api/brands/resolve/bulk', {
          body: { domains: ['trailhead.example'] },
        })
      ).status,
    ).toBe(200)
    expect(
      (await call('getBrandJson', '/api/brands/brand-json?domain=acme-outdoor.example')).body.data.house,
    ).toEqual({ domain: 'acme-outdoor.example', name: 'Acme Outdoor Group' })
    expect((await call('listBrands', '/api/brands/registry?limit=2')).body.stats.total).toBe(3)
    expect((await call('findBrand', '/api/brands/find?q=north')).body.results).toHaveLength(1)
    expect((await call('getBrandHistory', '/api/brands/history?domain=acme-outdoor.example')).status).toBe(
      200,
    )
    expect((await call('enrichBrand', '/api/brands/enrich?domain=northwind-foods.example')).body.cached).toBe(
      true,
    )
    expect(
      (
        await call('saveBrand', '/api/brands/save', {
          token: key,
          body: { domain: 'new-brand.example', brand_name: 'New' },
        })
      ).status,
    ).toBe(200)
    expect(
      (await call('resolveProperty', '/api/properties/resolve?domain=site.test')).body.properties,
    ).toHaveLength(1)
    expect(
      (
        await call('resolvePropertiesBulk', '/api/properties/resolve/bulk', {
          body: { domains: ['riverside-radio.example'] },
        })
      ).status,
    ).toBe(200)
    expect(
      (await call('listProperties', '/api/properties/registry')).body.properties.length,
    ).toBeGreaterThanOrEqual(3)
    expect((await call('validateProperty', '/api/properties/validate?domain=site.test')).body.valid).toBe(
      true,
    )
    expect(
      (
        await call('saveProperty', '/api/properties/save', {
          token: key,
          body: { publisher_domain: 'community.example', properties: [{ type: 'website', name: 'C' }] },
        })
      ).status,
    ).toBe(200)
    expect(
      (
        await call('saveProperty', '/api/properties/save', {
          token: key,
          body: { publisher_domain: 'pinecrest-news.example' },
        })
      ).status,
    ).toBe(409)
    expect(
      (await call('getPropertyHistory', '/api/properties/history?domain=community.example')).body.total,
    ).toBe(1)
    const claim = await call('claimHostedPropertyDomain', '/api/properties/hosted/community.example/claim', {
      method: 'POST',
      token: key,
    })
    expect(claim.body.authoritative_location).toContain('adcp_claim=')
    expect(
      (
        await call('verifyHostedPropertyOrigin', '/api/properties/hosted/community.example/verify-origin', {
          method: 'POST',
          token: key,
        })
      ).body.reason,
    ).toBe('authoritative_location_mismatch')
    expect(
      (
        await call('setupMyBrand', '/api/brands/setup-my-brand', {
          token: key,
          body: { domain: 'community.example', brand_name: 'Community' },
        })
      ).status,
    ).toBe(403)
    expect(
      (await call('lookupPublisher', '/api/registry/publisher?domain=pinecrest-news.example')).body.hosting
        .mode,
    ).toBe('self')
    const checked = await call('checkPropertyList', '/api/properties/check', {
      body: {
        domains: ['Pinecrest-News.example', 'pinecrest-news.example', 'doubleclick.net', 'unknown.example'],
      },
    })
    expect(checked.body.summary).toMatchObject({ total: 4, remove: 2, ok: 1, assess: 1 })
    expect(
      (await call('getPropertyCheckReport', `/api/properties/check/${checked.body.report_id}`)).status,
    ).toBe(200)
    const bulk = await call('bulkPropertyCheck', '/api/properties/check/bulk', {
      body: { identifiers: ['pinecrest-news.example', 'nowhere.example', ''] },
    })
    expect(bulk.body.summary).toMatchObject({ ready: 1, unknown: 1, skipped: 1 })
    expect(
      (await call('getBulkPropertyCheckReport', `/api/properties/check/bulk/${bulk.body.report_id}`)).status,
    ).toBe(200)
    expect(
      (await call('expandProductIdentifiers', '/api/registry/expand/product-identifiers', { body: selector }))
        .body.property_count,
    ).toBe(1)
    expect(
      (
        await call('validateProductAuthorization', '/api/registry/validate/product-authorization', {
          body: selector,
        })
      ).body.authorized,
    ).toBe(false)
    expect(
      (
        await call(
          'validatePropertyAuthorization',
          `/api/registry/validate/property-authorization?agent_url=${agent}&identifier_type=domain&identifier_value=listen.riverside-radio.example`,
        )
      ).body.authorized,
    ).toBe(true)
    expect(
      (await call('lookupProperty', '/api/registry/lookup/property?type=domain&value=pinecrest-news.example'))
        .body.count,
    ).toBe(2)
    expect(
      (await call('lookupDomain', '/api/registry/lookup/domain/pinecrest-news.example')).body
        .authorized_agents,
    ).toHaveLength(2)
    expect((await call('getAgentDomains', `/api/registry/lookup/agent/${agent}/domains`)).body.count).toBe(3)
    expect(
      (
        await call(
          'lookupPublisherAgentAuthorization',
          `/api/registry/publisher/authorization?domain=riverside-radio.example&agent=${agent}`,
        )
      ).body.publisher_wide,
    ).toBe(false)
    expect(
      (await call('lookupOperator', '/api/registry/operator?domain=adnetwork.example')).body.agents,
    ).toHaveLength(1)
    expect(
      (
        await call('revalidatePublisherAdagents', '/api/registry/publisher/site.test/adagents/revalidate', {
          method: 'POST',
          token: ADMIN_KEY,
        })
      ).body.discovery_method,
    ).toBe('authoritative_location')
    expect(
      (await call('getPublishersForAgent', `/v1/agents/${agent}/publishers?include=properties&limit=1`)).body
        .next_cursor,
    ).not.toBeNull()
    expect(
      (
        await call(
          'getPublishersForAgentLegacyApiPrefix',
          `/api/v1/agents/${agent}/publishers?status=authorized,revoked`,
        )
      ).status,
    ).toBe(400)
    expect(
      (await call('validateAdagents', '/api/adagents/validate', { body: { domain: 'site.test' } })).body.data
        .validation.discovery_method,
    ).toBe('authoritative_location')
    expect(
      (await call('createAdagents', '/api/adagents/create', { body: { authorized_agents: [] } })).status,
    ).toBe(400)
    const feed = await call('getRegistryFeed', '/api/registry/feed?types=publisher.*', { token: key })
    expect(feed.body.events.length).toBeGreaterThanOrEqual(3)
    called.add('streamRegistryFeed')
    const streamed = await readSse(`${test.registry.url}/api/registry/feed/stream?types=publisher.*`, key, 1)
    expect(streamed[0]).toMatchObject({ event: 'feed', id: feed.body.cursor })
    expect(
      (
        await call('getAgentAuthorizations', `/api/registry/authorizations?agent_url=${agent}`, {
          token: key,
        })
      ).body.count,
    ).toBe(4)
    called.add('getAgentAuthorizationsSnapshot')
    const snapshot = await fetch(`${test.registry.url}/api/registry/authorizations/snapshot`, {
      headers: { authorization: `Bearer ${key}` },
    })
    expect(snapshot.headers.get('content-type')).toBe('application/x-ndjson')
    expect((await snapshot.text()).trim().split('\n')).toHaveLength(7)
    const cached = await fetch(`${test.registry.url}/api/registry/authorizations/snapshot`, {
      headers: { authorization: `Bearer ${key}`, 'if-none-match': snapshot.headers.get('etag')! },
    })
    expect(cached.status).toBe(304)
    expect((await call('listAgents', '/api/registry/agents?properties=true')).body.count).toBe(2)
    expect((await call('listAgents', '/api/registry/agents?type=robot')).status).toBe(400)
    expect((await call('listPublishers', '/api/registry/publishers')).body.count).toBeGreaterThanOrEqual(3)
    expect((await call('getRegistryStats', '/api/registry/stats')).body.brands).toBe(4)
    const crawl = await call('requestCrawl', '/api/registry/crawl-request', {
      token: key,
      body: { domain: 'site.test' },
    })
    expect(crawl.status).toBe(202)
    expect(
      (
        await call('requestCrawl', '/api/registry/crawl-request', {
          token: key,
          body: { domain: 'site.test' },
        })
      ).status,
    ).toBeOneOf([202, 429])
    await test.registry.crawlsIdle()
    expect(
      (
        await call('getCrawlRequest', `/api/registry/crawl-request/${crawl.body.crawl_request_id}`, {
          token: key,
        })
      ).body.status,
    ).toBe('completed')
    expect(
      (
        await call('createOrganization', '/api/organizations', {
          token: key,
          body: { organization_name: 'Contract Co' },
        })
      ).status,
    ).toBe(201)
    expect(
      (
        await call('registerMemberAgent', '/api/me/agents', {
          token: key,
          body: { url: 'https://c.example/mcp', type: 'creative' },
        })
      ).status,
    ).toBe(201)
    expect((await call('listMemberAgents', '/api/me/agents', { token: key })).body.agents).toHaveLength(1)
    expect(
      (
        await call('updateMemberAgent', `/api/me/agents/${encodeURIComponent('https://c.example/mcp')}`, {
          method: 'PATCH',
          token: key,
          body: { name: 'C' },
        })
      ).status,
    ).toBe(200)
    expect(
      (
        await call('removeMemberAgent', `/api/me/agents/${encodeURIComponent('https://c.example/mcp')}`, {
          method: 'DELETE',
          token: key,
        })
      ).status,
    ).toBe(204)

    // Community mirrors: a contributor proposes, a moderator reviews (digest-bound), publishes and deletes.
    const moderatorOrg = await test.registry.createOrg('Contract Moderators')
    await test.registry.repository.mirrors.grantModerator(moderatorOrg.id, new Date().toISOString())
    const mod = moderatorOrg.apiKey
    const mirrorBody = {
      catalog_etag: 'v1',
      properties: [
        {
          property_id: 'mirror_site',
          property_type: 'website',
          name: 'Mirror Site',
          identifiers: [{ type: 'domain', value: 'mirror-site.example' }],
        },
      ],
    }
    const proposed = await call('publishCommunityMirror', '/api/registry/mirrors/contract_platform', {
      method: 'PUT',
      token: key,
      body: mirrorBody,
    })
    expect(proposed.status).toBe(202)
    const proposalPath = `/api/registry/mirror-proposals/${proposed.body.proposal_id}`
    expect(
      (await call('listCommunityMirrorProposals', '/api/registry/mirror-proposals', { token: key })).body
        .total,
    ).toBe(1)
    expect(
      (await call('getCommunityMirrorProposal', proposalPath, { token: key })).body.proposal.status,
    ).toBe('pending')
    expect(
      (
        await call('approveCommunityMirrorProposal', `${proposalPath}/approve`, {
          token: mod,
          body: { proposal_digest: 'f'.repeat(64) },
        })
      ).status,
    ).toBe(409)
    expect(
      (
        await call('approveCommunityMirrorProposal', `${proposalPath}/approve`, {
          token: mod,
          body: { proposal_digest: proposed.body.proposal_digest },
        })
      ).body.publisher_domains,
    ).toEqual(['mirror-site.example'])
    expect(
      (
        await call('rejectCommunityMirrorProposal', `${proposalPath}/reject`, {
          token: mod,
          body: { proposal_digest: proposed.body.proposal_digest, review_notes: 'already published' },
        })
      ).status,
    ).toBe(409)
    expect((await call('listCommunityMirrors', '/api/registry/mirrors')).body.total).toBe(1)
    expect(
      (await call('getCommunityMirror', '/api/registry/mirrors/contract_platform')).body.adagents_json
        .authorized_agents,
    ).toEqual([])
    expect(
      (
        await call('deleteCommunityMirror', '/api/registry/mirrors/contract_platform?force=true', {
          method: 'DELETE',
          token: mod,
        })
      ).status,
    ).toBe(200)
    // Policy registry.
    expect((await call('listPolicies', '/api/policies/registry?jurisdiction=FR')).body.stats.total).toBe(1)
    expect((await call('resolvePolicy', '/api/policies/resolve?policy_id=gdpr_consent')).body.name).toBe(
      'GDPR Consent Requirements',
    )
    expect(
      (await call('resolvePoliciesBulk', '/api/policies/resolve/bulk', { body: { policy_ids: ['nope'] } }))
        .body.results,
    ).toEqual({ nope: null })
    expect(
      (
        await call('savePolicy', '/api/policies/save', {
          token: key,
          body: {
            policy_id: 'contract_policy',
            version: '1',
            name: 'Contract Policy',
            category: 'standard',
            enforcement: 'may',
            policy: 'Be nice.',
          },
        })
      ).body.revision_number,
    ).toBe(1)
    expect(
      (await call('getPolicyHistory', '/api/policies/history?policy_id=contract_policy')).body.total,
    ).toBe(1)
    // Property catalog.
    const resolved = await call('resolveIdentifiers', '/api/registry/resolve', {
      token: key,
      body: {
        identifiers: [{ type: 'domain', value: 'catalog.example' }],
        provenance: { type: 'deal_history' },
      },
    })
    expect(resolved.body.summary.created).toBe(1)
    expect(
      (await call('browseCatalog', '/api/registry/catalog?identifier_type=domain')).body.total,
    ).toBeGreaterThan(1)
    expect(
      (await call('syncCatalog', `/api/registry/catalog/sync?since=${resolved.body.server_timestamp}`)).body
        .entries,
    ).toEqual([])
    const dispute = await call('fileCatalogDispute', '/api/registry/catalog/disputes', {
      token: key,
      body: {
        dispute_type: 'identifier_link',
        subject_type: 'identifier',
        subject_value: 'catalog.example',
        claim: 'This domain is not a property of that publisher.',
      },
    })
    expect(dispute.body.action_taken).toBe('link_suspended')
    expect(
      (await call('getCatalogDispute', `/api/registry/catalog/disputes/${dispute.body.dispute_id}`)).body
        .status,
    ).toBe('suspended')
    // Agent Compliance, status side: an agent on the test site (it answers the refresh probe and serves a
    // token endpoint). No run has finished for it yet, so the agent is untested: `unknown`, not verified.
    site.serveJson('/mcp', { jsonrpc: '2.0', id: 1, result: {} })
    site.serveJson('/token', { access_token: 'at', token_type: 'Bearer', expires_in: 60 })
    const monitored = `${site.origin}/mcp`
    const agentPath = `/api/registry/agents/${encodeURIComponent(monitored)}`
    await call('registerMemberAgent', '/api/me/agents', {
      token: key,
      body: { url: monitored, type: 'creative' },
    })
    expect((await call('getAgentCompliance', `${agentPath}/compliance`)).body.status).toBe('unknown')
    expect((await call('getAgentVerification', `${agentPath}/verification`)).body.verified).toBe(false)
    for (const [operationId, suffix] of [
      ['getAgentBadgeSvg', 'badge/creative.svg'],
      ['getAgentBadgeVersionedSvg', 'badge/creative/3.1.svg'],
    ] as const) {
      called.add(operationId)
      const badge = await fetch(`${test.registry.url}${agentPath}/${suffix}`)
      expect(badge.status).toBe(200)
      expect(badge.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8')
      expect(await badge.text()).toMatch(
        /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg".*Not Verified.*<\/svg>$/,
      )
    }
    expect((await call('getAgentBadgeEmbed', `${agentPath}/badge/creative/embed`)).body.verified).toBe(false)
    expect(
      (await call('getAgentBadgeVersionedEmbed', `${agentPath}/badge/creative/3.1/embed`)).body.adcp_version,
    ).toBe('3.1')
    expect(
      (
        await call('updateAgentLifecycle', `${agentPath}/lifecycle`, {
          method: 'PUT',
          token: key,
          body: { lifecycle_stage: 'testing' },
        })
      ).body.lifecycle_stage,
    ).toBe('testing')
    expect(
      (
        await call('updateAgentComplianceOptOut', `${agentPath}/compliance/opt-out`, {
          method: 'PUT',
          token: key,
          body: { opt_out: false },
        })
      ).body.compliance_opt_out,
    ).toBe(false)
    expect(
      (await call('getAgentMonitoringSettings', `${agentPath}/monitoring/settings`, { token: key })).body
        .check_interval_hours,
    ).toBe(24)
    expect(
      (
        await call('updateAgentMonitoringPause', `${agentPath}/monitoring/pause`, {
          method: 'PUT',
          token: key,
          body: { paused: false },
        })
      ).body.monitoring_paused,
    ).toBe(false)
    expect(
      (
        await call('updateAgentMonitoringInterval', `${agentPath}/monitoring/interval`, {
          method: 'PUT',
          token: key,
          body: { interval_hours: 48 },
        })
      ).body.check_interval_hours,
    ).toBe(48)
    expect(
      (
        await call('requeueAgentForHeartbeat', `${agentPath}/monitoring/requeue`, {
          method: 'POST',
          token: key,
        })
      ).body.requeued,
    ).toBe(true)
    const refreshed = await call('refreshAgent', `${agentPath}/refresh`, { method: 'POST', token: key })
    expect(refreshed.body).toMatchObject({ online: true, compliance: { ran: true } })
    expect(
      // The refresh probe, and the runs the refresh and the requeued heartbeat started.
      (await call('getAgentMonitoringRequests', `${agentPath}/monitoring/requests`, { token: key })).body
        .total,
    ).toBeGreaterThanOrEqual(1)
    expect((await call('getAgentAuthStatus', `${agentPath}/auth-status`, { token: key })).body.has_auth).toBe(
      false,
    )
    expect(
      (
        await call('connectAgent', `${agentPath}/connect`, {
          method: 'PUT',
          token: key,
          body: { auth_token: 'contract-token' },
        })
      ).body.has_auth,
    ).toBe(true)
    expect(
      (
        await call('saveAgentOAuthClientCredentials', `${agentPath}/oauth-client-credentials`, {
          method: 'PUT',
          token: key,
          body: { token_endpoint: `${site.origin}/token`, client_id: 'c', client_secret: 's' },
        })
      ).body.auth_type,
    ).toBe('oauth_client_credentials')
    expect(
      (
        await call('testAgentOAuthClientCredentials', `${agentPath}/oauth-client-credentials/test`, {
          method: 'POST',
          token: key,
        })
      ).body.ok,
    ).toBe(true)
    // Agent Probing, against our creative agent.
    const creativeMcp = `${creative.url}/mcp`
    const live = encodeURIComponent(creativeMcp)
    expect((await call('discoverAgent', `/api/public/discover-agent?url=${live}`)).body.type).toBe('creative')
    expect(
      (await call('getAgentFormats', `/api/public/agent-formats?url=${live}`)).body.formats.length,
    ).toBeGreaterThan(0)
    expect((await call('getAgentProducts', `/api/public/agent-products?url=${live}`)).status).toBe(502)
    expect((await call('getAgentPublishers', `/api/public/agent-publishers?url=${live}`)).status).toBe(502)
    expect(
      (await call('validatePublisher', '/api/public/validate-publisher?domain=site.test')).body
        .property_count,
    ).toBe(1)
    // Agent Compliance, the runs half.
    expect((await call('listStoryboards', '/api/storyboards')).body.count).toBeGreaterThan(100)
    expect(
      (await call('getStoryboard', '/api/storyboards/capability_discovery')).body.storyboard.phases[0]
        .steps[0].id,
    ).toBe('get_capabilities')
    expect(
      (await call('getStoryboardFirstStep', '/api/storyboards/capability_discovery/first-step')).body.step
        .task,
    ).toBe('get_adcp_capabilities')
    expect((await call('getJwks', '/api/.well-known/jwks.json')).body.keys[0].kty).toBe('EC')
    expect(
      (
        await call('registerMemberAgent', '/api/me/agents', {
          token: key,
          body: { url: creativeMcp, type: 'creative' },
        })
      ).status,
    ).toBe(201)
    const livePath = `/api/registry/agents/${live}`
    const run = await call('runStoryboard', `${livePath}/storyboard/capability_discovery/run`, {
      method: 'POST',
      token: key,
    })
    expect(run.body.storyboard_status.status).toBe('passing')
    expect(
      (
        await call('runStoryboardStep', `${livePath}/storyboard/capability_discovery/step/get_capabilities`, {
          method: 'POST',
          token: key,
          body: { dry_run: true },
        })
      ).body.passed,
    ).toBe(true)
    expect(
      (
        await call('compareStoryboard', `${livePath}/storyboard/capability_discovery/compare`, {
          method: 'POST',
          token: key,
        })
      ).body.reference_agent.summary.status,
    ).toBe('passing')
    expect((await call('getAgentComplianceHistory', `${livePath}/compliance/history`)).body.count).toBe(3)
    expect(
      (
        await call(
          'getAgentComplianceStepDiagnostics',
          `${livePath}/compliance/diagnostics?run_id=${run.body.run_id}`,
          {
            token: key,
          },
        )
      ).body.count,
    ).toBeGreaterThan(0)
    expect(
      (await call('getAgentStoryboardStatus', `${livePath}/storyboard-status`, { token: key })).body
        .passing_count,
    ).toBe(1)
    expect(
      (
        await call('bulkAgentStoryboardStatus', '/api/registry/agents/storyboard-status', {
          token: key,
          body: { agent_urls: [creativeMcp] },
        })
      ).body.agents[creativeMcp],
    ).toHaveLength(1)
    expect(
      (await call('getApplicableStoryboards', `${livePath}/applicable-storyboards`, { token: key })).body
        .supported_protocols,
    ).toContain('creative')
    // Search, Brand Discovery, Agent Discovery (part 2)
    expect((await call('apiDiscovery', '/api')).body.endpoints.search).toMatch(/\/api\/search$/)
    const found = await call('search', '/api/search?q=pinecrest')
    expect(found.body.publishers[0].domain).toBe('pinecrest-news.example')
    expect((await call('search', '/api/search?q=p')).status).toBe(400)
    expect(
      (await call('lookupManifestRef', '/api/manifest-refs/lookup?domain=acme-outdoor.example')).body.found,
    ).toBe(true)
    expect(
      (await call('lookupManifestRef', '/api/manifest-refs/lookup?domain=nothing-here.example')).body,
    ).toEqual({ success: false, found: false })
    expect(
      (
        await call('requestBrandCrawl', '/api/registry/brand-crawl-request', {
          token: key,
          body: { domain: 'site.test' },
        })
      ).status,
    ).toBe(202)
    expect(
      (
        await call('requestBrandCrawl', '/api/registry/brand-crawl-request', {
          token: key,
          body: { domain: 'site.test' },
        })
      ).status,
    ).toBe(429)
    expect(
      (
        await call('forceBrandCrawl', '/api/registry/brand/site.test/force-crawl', {
          method: 'POST',
          token: key,
        })
      ).status,
    ).toBe(403)
    const profiles = await call('searchAgentProfiles', '/api/registry/agents/search?property_types=website', {
      token: key,
    })
    expect(profiles.body.results.length).toBeGreaterThan(0)
    expect(
      (
        await call('requestManagerRevalidation', '/api/registry/manager-revalidation-request', {
          token: key,
          body: { manager_domain: 'manager.example' },
        })
      ).body.publishers_enqueued,
    ).toBe(0)
    await test.registry.crawlsIdle()

    expect([...IMPLEMENTED_OPERATIONS].filter((id) => !called.has(id))).toEqual([])
  }, 120_000)

  it('every implemented operation exists in the document under an in-scope tag', () => {
    const byId = new Map(operations().map((op) => [op.operationId, op]))
    const tags = new Set([
      'Onboarding',
      'Member Agents',
      'Brand Resolution',
      'Property Resolution',
      'Authorization Lookups',
      'Validation Tools',
      'Change Feed',
      'Agent Discovery',
      'Community Mirrors',
      'Policy Registry',
      'Property Catalog',
      'Agent Probing',
      'Agent Compliance',
      'Search',
      'Brand Discovery',
    ])
    for (const id of IMPLEMENTED_OPERATIONS) expect(tags.has(byId.get(id)?.tag ?? '')).toBe(true)
  })

  it('serves the document and a browsable reference', async () => {
    // No socket needed: the app answers in process.
    const app = createApp(test.registry.deps, { queue: createCrawlQueue(test.registry.deps) })
    const document = (await (await app.request('/openapi.json')).json()) as {
      openapi: string
      components: { schemas: { Error: unknown } }
    }
    expect(document.openapi).toBe('3.1.0')
    // The official Error, unchanged: `{ error: string }` required, nothing more.
    expect(document.components.schemas.Error).toEqual({
      type: 'object',
      properties: { error: { type: 'string' } },
      required: ['error'],
    })
    // The official document plus the documented additions, nothing else.
    const upstream = upstreamDocument()
    const served = document as unknown as { paths: Record<string, Record<string, Record<string, unknown>>> }
    for (const [path, item] of Object.entries(upstream.paths as typeof served.paths)) {
      for (const [method, official] of Object.entries(item)) {
        const mine = served.paths[path]![method]!
        const id = String(official.operationId)
        const officialResponses = (official.responses ?? {}) as Record<string, unknown>
        const myResponses = mine.responses as Record<string, unknown>
        expect(Object.keys(myResponses).sort(), id).toEqual(
          [...Object.keys(officialResponses), ...Object.keys(addedStatuses(official))].sort(),
        )
        for (const [status, response] of Object.entries(officialResponses)) {
          if (!REPLACED_SCHEMAS.has(`${id} ${status}`))
            expect(myResponses[status], `${id} ${status}`).toEqual(response)
        }
        // Addition 5: `search` appends its pagination parameters to the official ones.
        const officialParameters = (official.parameters ?? []) as unknown[]
        const myParameters = mine.parameters
          ? (mine.parameters as unknown[]).slice(0, id === 'search' ? officialParameters.length : undefined)
          : undefined
        expect({ ...mine, parameters: myParameters, responses: {}, requestBody: undefined }, id).toEqual({
          ...official,
          parameters: official.parameters ? officialParameters : undefined,
          responses: {},
          requestBody: undefined,
        })
      }
    }
    const page = await (await app.request('/docs')).text()
    expect(page).toContain('expandProductIdentifiers')
    for (const id of [
      'setupMyBrand',
      'claimHostedPropertyDomain',
      'verifyHostedPropertyOrigin',
      'lookupPublisher',
    ]) {
      const row = page.match(
        new RegExp(`<tr class="(yes|no)"><td><b>[A-Z]+</b></td><td><code>[^<]*</code></td><td id="${id}"`),
      )
      expect(row?.[1], id).toBe('yes')
    }
    // All 109 operations of the official document are served, and the reference lists none as "not yet".
    const documented = operations().map((op) => op.operationId)
    expect(documented).toHaveLength(109)
    expect(documented.filter((id) => !IMPLEMENTED_OPERATIONS.has(id))).toEqual([])
    expect(page.match(/<tr class="yes">/g)).toHaveLength(109)
    expect(page).not.toContain('not yet')
    expect(page).not.toMatch(/<script|https:\/\/cdn/)
  })
})

describe('error sweep: every implemented operation refuses bad calls as the document says', () => {
  const bad: Record<string, string> = {
    domain: 'not_a_domain',
    agentUrl: 'not-a-url',
    encodedUrl: 'not-a-url',
    url: 'not-a-url',
    crawlRequestId: 'not-a-uuid',
    reportId: 'not-a-uuid',
  }
  const good: Record<string, string> = {
    domain: 'community.example',
    url: 'https://nothing.example/mcp',
    encodedUrl: 'https://nothing.example/mcp',
  }
  const pathOf = (template: string, values = bad) =>
    template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? 'x'))

  it('answers 401 without a credential, 400 for missing or malformed input, 415 for a non-JSON body', async () => {
    const seen: string[] = []
    for (const op of operations().filter((item) => IMPLEMENTED_OPERATIONS.has(item.operationId))) {
      const path = pathOf(op.path)
      const method = op.method.toUpperCase()
      const params = (op.raw.parameters ?? []) as Array<{ in: string; required?: boolean }>
      if (op.secured) {
        const anonymous = await api(test.registry, op.operationId, path, {
          method,
          ...(op.raw.requestBody ? { body: {} } : {}),
        })
        expect(anonymous.status, `${op.operationId} without a credential`).toBe(401)
        seen.push(`${op.operationId} 401`)
      }
      const token = op.secured ? key : undefined
      const hasPathParameter = params.some((param) => param.in === 'path')
      if (params.some((param) => param.in === 'query' && param.required) || hasPathParameter) {
        const refused = await api(test.registry, op.operationId, path, {
          method,
          ...(token ? { token } : {}),
          ...(op.raw.requestBody ? { body: {} } : {}),
        })
        expect(refused.status, `${op.operationId} with bad input`).toBeOneOf([400, 404])
        seen.push(`${op.operationId} ${refused.status}`)
      }
      if (op.raw.requestBody) {
        const valid = pathOf(op.path, good)
        const broken = await api(test.registry, op.operationId, valid, {
          method,
          ...(token ? { token } : {}),
          body: '{ not json',
        })
        expect(broken.status, `${op.operationId} with broken JSON`).toBe(400)
        const text = await api(test.registry, op.operationId, valid, {
          method,
          ...(token ? { token } : {}),
          headers: { 'content-type': 'text/plain' },
          body: 'plain',
        })
        expect(text.status, `${op.operationId} with text/plain`).toBe(415)
        seen.push(`${op.operationId} 400`, `${op.operationId} 415`)
      }
    }
    expect(seen.length).toBeGreaterThan(60)
  })
})

describe("one error body: the official document's Error", () => {
  const official = (
    parse(readFileSync(registryOpenApiFile, 'utf8')) as {
      components: { schemas: { Error: object } }
    }
  ).components.schemas.Error
  const validate = new Ajv({ strict: false }).compile(official)
  const errorOf = async (response: Response, status: number) => {
    expect(response.status).toBe(status)
    const body = (await response.json()) as { error: unknown; message: unknown }
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true)
    expect(body.error).toMatch(/^[a-z][a-z0-9_]*$/)
    expect(typeof body.message).toBe('string')
    return body
  }

  it('answers refusals, unknown routes and unexpected failures as { error: code, message }', async () => {
    const { deps } = test.registry
    const app = createApp(deps, { queue: createCrawlQueue(deps) })
    expect(await errorOf(await app.request('/api/brands/registry?source=nope'), 400)).toMatchObject({
      error: 'invalid_parameter',
    })
    expect(await errorOf(await app.request('/nope'), 404)).toMatchObject({ error: 'not_found' })
    const failing = createApp(
      {
        ...deps,
        log: () => {},
        repository: {
          ...deps.repository,
          brands: {
            ...deps.repository.brands,
            listBrands: () => Promise.reject(new Error('secret detail')),
          },
        },
      },
      { queue: createCrawlQueue(deps) },
    )
    const failed = await errorOf(await failing.request('/api/brands/registry'), 500)
    expect(failed).toMatchObject({ error: 'internal_error' })
    expect(JSON.stringify(failed)).not.toContain('secret')
  })
})
