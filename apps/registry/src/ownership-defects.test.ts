/**
 * The ownership defects of issue 22, each pinned over real HTTP on SQLite and PostgreSQL (`api` checks every
 * answer against the served and the upstream document):
 * - `saveProperty` let any organization overwrite another's property, even an origin-verified hosted publisher;
 * - a second organization listing the same agent URL could opt it out of compliance, deprecate it, pause its
 *   monitoring and read its run diagnostics (only the agent's controller may: README, "Ownership");
 * - the rate limiter ran before authentication (an anonymous call to a locked operation got 429).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGENT_CONTROL_PATH, controllerCredentials } from './auth/authorize.js'
import { TEST_CREDENTIALS_KEY } from './compliance/status-testing.js'
import {
  api,
  startSite,
  startTestRegistry,
  testBackends,
  type Site,
  type TestRegistry,
} from './testing/registry.js'

const backends = await testBackends()

describe.each(backends)('ownership defects on %s', (name, backend) => {
  let test: TestRegistry
  let site: Site
  let orgA: { id: string; apiKey: string }
  let orgB: { id: string; apiKey: string }
  const registry = () => test.registry

  beforeAll(async () => {
    if (!backend) return
    site = await startSite()
    test = await startTestRegistry(backend, {
      origins: { 'hosted-pub.test': site.origin },
      env: { ALLOW_PRIVATE_AGENTS: '1', AGENT_CREDENTIALS_KEY: TEST_CREDENTIALS_KEY },
    })
    orgA = await registry().createOrg('Publisher A')
    orgB = await registry().createOrg('Attacker B')
  })

  afterAll(async () => {
    if (!backend) return
    await test?.registry.close()
    await test?.cleanup()
    await site?.close()
  })

  const saveProperty = (token: string, domain: string, name: string, email: string) =>
    api(registry(), 'saveProperty', '/api/properties/save', {
      token,
      body: {
        publisher_domain: domain,
        properties: [{ type: 'website', name }],
        contact: { name, email },
      },
    })
  const resolved = async (domain: string) =>
    (await api(registry(), 'resolveProperty', `/api/properties/resolve?domain=${domain}`)).body

  it.skipIf(!backend)(`keeps a community property its first saver's (${name})`, async () => {
    expect((await saveProperty(orgA.apiKey, 'community-pub.test', 'A Pub', 'a@a.test')).status).toBe(200)
    const before = await resolved('community-pub.test')
    const hijack = await saveProperty(orgB.apiKey, 'community-pub.test', 'B Pub', 'b@b.test')
    expect([hijack.status, hijack.body.error]).toEqual([403, 'property_not_owned'])
    expect(await resolved('community-pub.test')).toEqual(before)
    // The owner still edits it.
    expect((await saveProperty(orgA.apiKey, 'community-pub.test', 'A Pub 2', 'a@a.test')).status).toBe(200)
    expect((await resolved('community-pub.test')).properties[0].name).toBe('A Pub 2')
  })

  it.skipIf(!backend)(
    `keeps an origin-verified hosted publisher its owner's: hosted file, contact and verified flag (${name})`,
    async () => {
      const domain = 'hosted-pub.test'
      expect((await saveProperty(orgA.apiKey, domain, 'Hosted Pub', 'ops@hosted-pub.test')).status).toBe(200)
      const claim = await api(
        registry(),
        'claimHostedPropertyDomain',
        `/api/properties/hosted/${domain}/claim`,
        {
          method: 'POST',
          token: orgA.apiKey,
        },
      )
      site.serveJson('/.well-known/adagents.json', {
        authoritative_location: claim.body.authoritative_location,
      })
      const verified = await api(
        registry(),
        'verifyHostedPropertyOrigin',
        `/api/properties/hosted/${domain}/verify-origin`,
        { method: 'POST', token: orgA.apiKey },
      )
      expect(verified.body).toMatchObject({ verified: true, bound_org_id: orgA.id })
      const hostedUrl = `${registry().url}/hosted/${domain}/adagents.json`
      const hostedBefore = await (await fetch(hostedUrl)).text()
      const before = await resolved(domain)
      expect(before.verified).toBe(true)

      const hijack = await saveProperty(orgB.apiKey, domain, 'Hijacked', 'attacker@b.test')
      expect([hijack.status, hijack.body.error]).toEqual([403, 'property_not_owned'])
      expect(await resolved(domain)).toEqual(before)
      const hostedAfter = await (await fetch(hostedUrl)).text()
      expect(hostedAfter).toBe(hostedBefore)
      expect(hostedAfter).not.toContain('attacker@b.test')

      // The owner's own edit keeps the publisher verified.
      expect((await saveProperty(orgA.apiKey, domain, 'Hosted Pub 2', 'ops@hosted-pub.test')).status).toBe(
        200,
      )
      const edited = await resolved(domain)
      expect(edited.verified).toBe(true)
      expect(edited.properties[0].name).toBe('Hosted Pub 2')
    },
  )

  it.skipIf(!backend)(
    `lets only the controller of a shared agent URL change it for everyone; control is proved at the agent (${name})`,
    async () => {
      const agentUrl = `${site.origin}/mcp`
      const encoded = encodeURIComponent(agentUrl)
      const base = `/api/registry/agents/${encoded}`
      const register = (token: string) =>
        api(registry(), 'registerMemberAgent', '/api/me/agents', {
          token,
          body: { url: agentUrl, type: 'sales', name: 'Shared' },
        })
      expect((await register(orgA.apiKey)).status).toBe(201)
      // B may list the same public agent for itself …
      expect((await register(orgB.apiKey)).status).toBe(201)
      const settings = async (token: string) =>
        api(registry(), 'getAgentMonitoringSettings', `${base}/monitoring/settings`, { token })
      const compliance = async () => (await api(registry(), 'getAgentCompliance', `${base}/compliance`)).body
      const settingsBefore = (await settings(orgA.apiKey)).body
      const complianceBefore = await compliance()

      // … but not change it for everyone, nor read its diagnostics.
      const attempts = [
        api(registry(), 'updateAgentComplianceOptOut', `${base}/compliance/opt-out`, {
          method: 'PUT',
          token: orgB.apiKey,
          body: { opt_out: true },
        }),
        api(registry(), 'updateAgentLifecycle', `${base}/lifecycle`, {
          method: 'PUT',
          token: orgB.apiKey,
          body: { lifecycle_stage: 'deprecated' },
        }),
        api(registry(), 'updateAgentMonitoringPause', `${base}/monitoring/pause`, {
          method: 'PUT',
          token: orgB.apiKey,
          body: { paused: true },
        }),
        api(registry(), 'getAgentComplianceStepDiagnostics', `${base}/compliance/diagnostics`, {
          token: orgB.apiKey,
        }),
        settings(orgB.apiKey),
      ]
      for (const attempt of await Promise.all(attempts)) {
        expect([attempt.status, attempt.body.error]).toEqual([403, 'not_agent_controller'])
      }
      expect((await settings(orgA.apiKey)).body).toEqual(settingsBefore)
      expect(await compliance()).toEqual(complianceBefore)

      // A control file naming A does not let B prove control; one naming B does, and then A is the outsider.
      const verify = (token: string) =>
        fetch(`${registry().url}${base}/control/verify`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
        }).then(async (response) => ({
          status: response.status,
          body: (await response.json()) as Record<string, unknown>,
        }))
      expect((await verify(orgB.apiKey)).body).toMatchObject({ verified: false, reason: 'HTTP 404' })
      site.serveJson(AGENT_CONTROL_PATH, { organization_id: orgA.id })
      expect((await verify(orgB.apiKey)).body).toMatchObject({
        verified: false,
        reason: 'the control file names another organization',
        controller: { organization_id: orgA.id, proof: 'first_registrant' },
      })
      site.serveJson(AGENT_CONTROL_PATH, { organization_id: orgB.id })
      expect((await verify(orgB.apiKey)).body).toMatchObject({
        verified: true,
        controller: { organization_id: orgB.id, proof: 'agent_control_file' },
      })
      const paused = await api(registry(), 'updateAgentMonitoringPause', `${base}/monitoring/pause`, {
        method: 'PUT',
        token: orgB.apiKey,
        body: { paused: true },
      })
      expect([paused.status, paused.body.monitoring_paused]).toEqual([200, true])
      const outsider = await api(registry(), 'updateAgentMonitoringPause', `${base}/monitoring/pause`, {
        method: 'PUT',
        token: orgA.apiKey,
        body: { paused: false },
      })
      expect([outsider.status, outsider.body.error]).toEqual([403, 'not_agent_controller'])
      expect((await settings(orgB.apiKey)).body.monitoring_paused).toBe(true)
    },
  )

  it.skipIf(!backend)(
    `presents a run's own organization's credential, and the controller's on the registry's runs (${name})`,
    async () => {
      const agentUrl = `${site.origin}/credentials/mcp`
      const base = `/api/registry/agents/${encodeURIComponent(agentUrl)}`
      for (const org of [orgA, orgB])
        await api(registry(), 'registerMemberAgent', '/api/me/agents', {
          token: org.apiKey,
          body: { url: agentUrl, type: 'sales' },
        })
      const connect = (token: string, secret: string) =>
        api(registry(), 'connectAgent', `${base}/connect`, {
          method: 'PUT',
          token,
          body: { auth_token: secret },
        })
      expect((await connect(orgA.apiKey, 'a-secret')).status).toBe(200)
      // B saves its own (bogus) token last: before, every run presented the most recently saved credential.
      expect((await connect(orgB.apiKey, 'b-bogus')).status).toBe(200)
      const store = registry().deps.compliance!.credentials!
      expect(await store.credentialFor(agentUrl)).toBeUndefined()
      const source = controllerCredentials(registry().repository, store)
      expect(await source.credentialFor(agentUrl)).toEqual({ type: 'bearer', token: 'a-secret' })
      expect(await source.credentialFor(agentUrl, orgA.id)).toEqual({ type: 'bearer', token: 'a-secret' })
      expect(await source.credentialFor(agentUrl, orgB.id)).toEqual({ type: 'bearer', token: 'b-bogus' })
    },
  )
})

describe('authentication before rate limiting', () => {
  let test: TestRegistry
  beforeAll(async () => {
    test = await startTestRegistry(
      { kind: 'sqlite' },
      { seed: false, env: { RATE_LIMIT_WRITE_PER_MINUTE: '1', RATE_LIMIT_CRAWL_PER_MINUTE: '1' } },
    )
  })
  afterAll(async () => {
    await test?.registry.close()
    await test?.cleanup()
  })

  it('answers an anonymous or badly credentialed call to a locked operation 401, never 429', async () => {
    const body = { publisher_domain: 'limited.test', properties: [{ type: 'website', name: 'L' }] }
    for (let attempt = 0; attempt < 3; attempt++) {
      const anonymous = await api(test.registry, 'saveProperty', '/api/properties/save', { body })
      expect(anonymous.status).toBe(401)
      expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata=/)
      const wrong = await api(test.registry, 'saveProperty', '/api/properties/save', {
        body,
        token: 'sk_wrong',
      })
      expect(wrong.status).toBe(401)
      expect(wrong.headers.get('www-authenticate')).toMatch(/error="invalid_token"/)
    }
    // The same for the control-file check this service adds (rate-limited as a crawl).
    const verify = `${test.registry.url}/api/registry/agents/${encodeURIComponent('https://agent.example/mcp')}/control/verify`
    for (let attempt = 0; attempt < 3; attempt++) {
      const response = await fetch(verify, { method: 'POST' })
      expect(response.status).toBe(401)
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata=/)
    }
    // The limiter still counts authenticated callers: one write a minute.
    const { apiKey } = await test.registry.createOrg('Limited')
    expect(
      (await api(test.registry, 'saveProperty', '/api/properties/save', { body, token: apiKey })).status,
    ).toBe(200)
    expect(
      (await api(test.registry, 'saveProperty', '/api/properties/save', { body, token: apiKey })).status,
    ).toBe(429)
  })
})
