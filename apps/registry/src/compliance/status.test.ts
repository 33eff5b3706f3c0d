/**
 * Agent Compliance, status side, on SQLite and PostgreSQL over real HTTP: compliance detail, verification,
 * badges (plain and version-pinned, with embed code and ETags), lifecycle and opt-out with requalification,
 * monitoring settings, requeue, the request log and refresh. Runs come from a test launcher (a stand-in for the
 * storyboard runner) that records outcomes through the status side's own sink; every JSON response is checked
 * against the OpenAPI document by `api`.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { api, type Backend } from '../testing/registry.js'
import {
  startStatusRegistry,
  statusDatabase,
  xmlProblem,
  type StatusDatabase,
  type StatusRegistry,
} from './status-testing.js'

const postgresUrl = await resolveTestPostgresUrl()
const backends: Array<[string, Backend | undefined]> = [
  ['sqlite', { kind: 'sqlite' }],
  ['postgres', postgresUrl ? { kind: 'postgres', url: postgresUrl } : undefined],
]

async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 8000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * A stand-in agent on 127.0.0.1 answering every POST (the refresh probe) with `status` and an empty result to
 * the request's own id: the MCP client refuses that result at once (no protocol version), and the probe still
 * counts the agent as up from its status (without the id echoed, the client waited out the 10 s probe timeout).
 */
async function startAgent(
  status = 200,
): Promise<{ url: string; hits: () => number; close(): Promise<void> }> {
  let hits = 0
  const server: Server = createServer((request, response) => {
    hits += 1
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      let id: unknown = 1
      try {
        id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown }).id ?? 1
      } catch {
        // not JSON: answer id 1
      }
      response
        .writeHead(status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id, result: {} }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    hits: () => hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

const svgOf = async (url: string, headers: Record<string, string> = {}) => {
  const response = await fetch(url, { headers })
  return { response, text: response.status === 200 ? await response.text() : '' }
}

const PASSING = [
  { storyboardId: 'capability_discovery', status: 'passed' },
  { storyboardId: 'creative_lifecycle', status: 'passed' },
  { storyboardId: 'creative_template', status: 'passed' },
] as const

describe.each(backends)('agent compliance status on %s', (name, backend) => {
  let database: StatusDatabase
  let running: StatusRegistry
  let agent: Awaited<ReturnType<typeof startAgent>>
  let owner: string
  let stranger: string
  let path: string

  const registry = () => running.registry

  beforeAll(async () => {
    if (!backend) return
    database = statusDatabase(backend)
    running = await startStatusRegistry(database)
    agent = await startAgent()
    owner = (await registry().createOrg('Owner')).apiKey
    stranger = (await registry().createOrg('Stranger')).apiKey
    path = `/api/registry/agents/${encodeURIComponent(agent.url)}`
  })

  afterAll(async () => {
    await running?.registry.close()
    await agent?.close()
    await database?.cleanup()
  })

  it.skipIf(!backend)('answers an unknown agent as unknown and unverified, with a grey badge', async () => {
    const unknown = `/api/registry/agents/${encodeURIComponent('https://never.example/mcp')}`
    const detail = await api(registry(), 'getAgentCompliance', `${unknown}/compliance`)
    expect(detail.status).toBe(200)
    expect(detail.body).toMatchObject({
      agent_url: 'https://never.example/mcp',
      status: 'unknown',
      lifecycle_stage: 'production',
      storyboards_total: 0,
      verified: false,
      verified_badges: [],
      headline: null,
      membership_tier: null,
    })
    const verification = await api(registry(), 'getAgentVerification', `${unknown}/verification`)
    expect(verification.body).toMatchObject({ verified: false, badges: [] })
    const { response, text } = await svgOf(`${registry().url}${unknown}/badge/creative.svg`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8')
    expect(response.headers.get('cache-control')).toBe('no-cache')
    expect(xmlProblem(text)).toBeUndefined()
    expect(text).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/)
    expect(text).toContain('Not Verified')
    expect(text).toContain('#6b7280')
    const embed = await api(registry(), 'getAgentBadgeEmbed', `${unknown}/badge/creative/embed`)
    expect(embed.body).toMatchObject({ verified: false, role: 'creative' })
    expect(embed.body.adcp_version).toBeUndefined()
    const pinned = await api(registry(), 'getAgentBadgeVersionedEmbed', `${unknown}/badge/creative/3.1/embed`)
    expect(pinned.body).toMatchObject({ verified: false, adcp_version: '3.1' })
    expect(pinned.body.badge_svg_url).toMatch(/\/badge\/creative\/3\.1\.svg$/)
  })

  it.skipIf(!backend)('refuses bad agent URLs, roles and versions with 400', async () => {
    const bad = `/api/registry/agents/${encodeURIComponent('ftp://x.example/mcp')}`
    expect((await api(registry(), 'getAgentCompliance', `${bad}/compliance`)).body.error).toBe(
      'invalid_agent_url',
    )
    expect((await api(registry(), 'getAgentVerification', `${bad}/verification`)).status).toBe(400)
    expect((await api(registry(), 'getAgentBadgeSvg', `${bad}/badge/creative.svg`)).status).toBe(400)
    const role = await api(registry(), 'getAgentBadgeSvg', `${path}/badge/seller.svg`)
    expect(role.status).toBe(400)
    expect(role.body).toMatchObject({ error: 'invalid_role', code: 'invalid_role' })
    expect(role.body.valid_roles).toContain('media-buy')
    expect((await api(registry(), 'getAgentBadgeEmbed', `${path}/badge/seller/embed`)).body.code).toBe(
      'invalid_role',
    )
    expect(
      (await api(registry(), 'getAgentBadgeVersionedSvg', `${path}/badge/creative/3.svg`)).body.error,
    ).toBe('invalid_version')
    expect(
      (await api(registry(), 'getAgentBadgeVersionedEmbed', `${path}/badge/creative/latest/embed`)).status,
    ).toBe(400)
    expect((await api(registry(), 'getAgentBadgeVersionedSvg', `${path}/badge/nope/3.1.svg`)).status).toBe(
      400,
    )
  })

  it.skipIf(!backend)('monitors a registered agent: the first heartbeat earns the badges', async () => {
    running.launcher.plan(agent.url, PASSING)
    const registered = await api(registry(), 'registerMemberAgent', '/api/me/agents', {
      token: owner,
      body: { url: agent.url, type: 'creative' },
    })
    expect(registered.status).toBe(201)
    await eventually(() => running.launcher.launches.some((launch) => launch.agentUrl === agent.url))
    await running.launcher.idle()
    await eventually(
      async () =>
        (await api(registry(), 'getAgentCompliance', `${path}/compliance`)).body.status === 'passing',
    )
    expect(running.launcher.launches.filter((launch) => launch.agentUrl === agent.url)[0]!.trigger).toBe(
      'heartbeat',
    )
    const detail = await api(registry(), 'getAgentCompliance', `${path}/compliance`, { token: owner })
    expect(detail.body).toMatchObject({
      status: 'passing',
      storyboards_passing: 3,
      storyboards_total: 3,
      headline: '3 of 3 storyboards passing',
      adcp_version: '3.1.19',
      requested_compliance_target: '3.1',
      check_interval_hours: 24,
      verified: true,
      membership_tier: 'member',
      is_api_access_tier: true,
      verdict_source: 'heartbeat',
      declared_specialisms: ['creative-template'],
      specialism_status: { 'creative-template': 'passing' },
    })
    expect(detail.body.tracks).toMatchObject({ creative: 'passing' })
    expect(detail.body.last_checked_at).toEqual(expect.any(String))
    const storyboard = detail.body.storyboard_statuses.find(
      (entry: { storyboard_id: string }) => entry.storyboard_id === 'creative_lifecycle',
    )
    expect(storyboard).toMatchObject({ title: 'Creative lifecycle', track: 'creative', status: 'passing' })
    // Owner-only fields are null for anyone else.
    const publicView = await api(registry(), 'getAgentCompliance', `${path}/compliance`, { token: stranger })
    expect(publicView.body).toMatchObject({
      membership_tier: null,
      is_api_access_tier: false,
      verdict_source: null,
    })

    const verification = await api(registry(), 'getAgentVerification', `${path}/verification`)
    expect(verification.body.verified).toBe(true)
    expect(verification.body.badges).toEqual([
      expect.objectContaining({
        role: 'creative',
        adcp_version: '3.1',
        verified_specialisms: ['creative-template'],
        verification_modes: ['spec'],
        verified_protocol_version: '3.1.19',
      }),
    ])
    expect(verification.body.badges[0].badge_url).toBe(`${registry().url}${path}/badge/creative.svg`)

    const plain = await svgOf(`${registry().url}${path}/badge/creative.svg`)
    expect(xmlProblem(plain.text)).toBeUndefined()
    expect(plain.text).toContain('Verified · Creative Agent 3.1')
    expect(plain.text).toContain('#0f8b8d')
    // No media-buy storyboard ran: that role is not verified.
    expect((await svgOf(`${registry().url}${path}/badge/media-buy.svg`)).text).toContain('Not Verified')
    const pinned = await svgOf(`${registry().url}${path}/badge/creative/3.1.svg`)
    expect(xmlProblem(pinned.text)).toBeUndefined()
    expect(pinned.text).toContain('Verified · Creative Agent 3.1')
    expect((await svgOf(`${registry().url}${path}/badge/creative/3.0.svg`)).text).toContain(
      'Not Verified · Creative Agent 3.0',
    )
    // ETags: revalidation answers 304 while nothing changed.
    const etag = plain.response.headers.get('etag')!
    expect(
      (await fetch(`${registry().url}${path}/badge/creative.svg`, { headers: { 'if-none-match': etag } }))
        .status,
    ).toBe(304)

    const embed = await api(registry(), 'getAgentBadgeEmbed', `${path}/badge/creative/embed`)
    expect(embed.body).toMatchObject({ verified: true, adcp_version: '3.1', role: 'creative' })
    expect(embed.body.html).toBe(
      `<a href="${registry().url}${path}/compliance"><img src="${registry().url}${path}/badge/creative.svg" alt="AgenticAdvertising.org Verified Creative Agent" height="20"></a>`,
    )
    expect(embed.body.markdown).toBe(
      `[![AgenticAdvertising.org Verified Creative Agent](${registry().url}${path}/badge/creative.svg)](${registry().url}${path}/compliance)`,
    )
    const versioned = await api(registry(), 'getAgentBadgeVersionedEmbed', `${path}/badge/creative/3.1/embed`)
    expect(versioned.body).toMatchObject({ verified: true, adcp_version: '3.1' })
    expect(versioned.body.html).toContain('alt="AgenticAdvertising.org Verified Creative Agent 3.1"')
    expect(versioned.body.badge_svg_url).toBe(`${registry().url}${path}/badge/creative/3.1.svg`)
  })

  it.skipIf(!backend)('locks the settings to the owner and validates them', async () => {
    expect((await api(registry(), 'getAgentMonitoringSettings', `${path}/monitoring/settings`)).status).toBe(
      401,
    )
    expect(
      (
        await api(registry(), 'getAgentMonitoringSettings', `${path}/monitoring/settings`, {
          token: stranger,
        })
      ).status,
    ).toBe(403)
    const settings = await api(registry(), 'getAgentMonitoringSettings', `${path}/monitoring/settings`, {
      token: owner,
    })
    expect(settings.body).toEqual({
      monitoring_paused: false,
      check_interval_hours: 24,
      monitoring_paused_at: null,
    })

    const lifecycle = await api(registry(), 'updateAgentLifecycle', `${path}/lifecycle`, {
      method: 'PUT',
      token: owner,
      body: { lifecycle_stage: 'testing' },
    })
    expect(lifecycle.body).toMatchObject({
      agent_url: agent.url,
      lifecycle_stage: 'testing',
      compliance_opt_out: false,
    })
    expect(
      (
        await api(registry(), 'updateAgentLifecycle', `${path}/lifecycle`, {
          method: 'PUT',
          token: owner,
          body: { lifecycle_stage: 'retired' },
        })
      ).status,
    ).toBe(400)
    expect(
      (
        await api(registry(), 'updateAgentLifecycle', `${path}/lifecycle`, {
          method: 'PUT',
          token: stranger,
          body: { lifecycle_stage: 'testing' },
        })
      ).status,
    ).toBe(403)
    expect((await api(registry(), 'getAgentCompliance', `${path}/compliance`)).body.lifecycle_stage).toBe(
      'testing',
    )

    for (const hours of [5, 169, 12.5]) {
      const refused = await api(registry(), 'updateAgentMonitoringInterval', `${path}/monitoring/interval`, {
        method: 'PUT',
        token: owner,
        body: { interval_hours: hours },
      })
      expect(refused.status, String(hours)).toBe(400)
    }
    const interval = await api(registry(), 'updateAgentMonitoringInterval', `${path}/monitoring/interval`, {
      method: 'PUT',
      token: owner,
      body: { interval_hours: 6 },
    })
    expect(interval.body).toMatchObject({ check_interval_hours: 6, monitoring_paused: false })
    expect(
      (await api(registry(), 'getAgentCompliance', `${path}/compliance`)).body.check_interval_hours,
    ).toBe(6)

    const paused = await api(registry(), 'updateAgentMonitoringPause', `${path}/monitoring/pause`, {
      method: 'PUT',
      token: owner,
      body: { paused: true },
    })
    expect(paused.body.monitoring_paused).toBe(true)
    expect(Date.parse(paused.body.monitoring_paused_at)).not.toBeNaN()
    expect(
      (
        await api(registry(), 'updateAgentMonitoringPause', `${path}/monitoring/pause`, {
          method: 'PUT',
          token: owner,
          body: { paused: 'yes' },
        })
      ).status,
    ).toBe(400)
    // Paused: refresh is refused and a requeue does not fire.
    const launches = running.launcher.launches.length
    expect(
      (await api(registry(), 'refreshAgent', `${path}/refresh`, { method: 'POST', token: owner })).status,
    ).toBe(409)
    expect(
      (
        await api(registry(), 'requeueAgentForHeartbeat', `${path}/monitoring/requeue`, {
          method: 'POST',
          token: owner,
        })
      ).body,
    ).toEqual({ requeued: true })
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(running.launcher.launches.length).toBe(launches)
    const resumed = await api(registry(), 'updateAgentMonitoringPause', `${path}/monitoring/pause`, {
      method: 'PUT',
      token: owner,
      body: { paused: false },
    })
    expect(resumed.body).toEqual({
      monitoring_paused: false,
      check_interval_hours: 6,
      monitoring_paused_at: null,
    })
    // Resumed: the requeued agent is due at once.
    await eventually(() => running.launcher.launches.length === launches + 1)
    expect(running.launcher.launches.at(-1)!.trigger).toBe('heartbeat')
    await running.launcher.idle()
  })

  it.skipIf(!backend)(
    'refresh probes the agent and starts a full run; a failing run takes the badge',
    async () => {
      running.launcher.plan(agent.url, [
        { storyboardId: 'capability_discovery', status: 'passed' },
        { storyboardId: 'creative_lifecycle', status: 'passed' },
        { storyboardId: 'creative_template', status: 'failed' },
      ])
      const hits = agent.hits()
      const refreshed = await api(registry(), 'refreshAgent', `${path}/refresh`, {
        method: 'POST',
        token: owner,
      })
      expect(refreshed.status).toBe(200)
      expect(agent.hits()).toBe(hits + 1)
      expect(refreshed.body).toMatchObject({
        online: true,
        tools_count: null,
        inferred_type: 'creative',
        oauth_required: false,
        compliance: {
          ran: true,
          adcp_version: '3.1.19',
          requested_compliance_target: '3.1',
          badge_eligible: true,
        },
      })
      expect(refreshed.body.compliance.run_id).toBe(running.launcher.launches.at(-1)!.runId)
      await running.launcher.idle()
      const detail = await api(registry(), 'getAgentCompliance', `${path}/compliance`, { token: owner })
      expect(detail.body).toMatchObject({
        status: 'degraded',
        storyboards_passing: 2,
        verified: false,
        verdict_source: 'owner_test',
        specialism_status: { 'creative-template': 'failing' },
      })
      expect((await svgOf(`${registry().url}${path}/badge/creative.svg`)).text).toContain('Not Verified')
      // The per-agent limit: one refresh a minute.
      const again = await api(registry(), 'refreshAgent', `${path}/refresh`, { method: 'POST', token: owner })
      expect(again.status).toBe(429)
      expect(again.body.retry_after).toBeGreaterThan(0)
      expect(again.headers.get('retry-after')).toBe(String(again.body.retry_after))
      // A single-storyboard rerun fixes the status but cannot restore the badge (not a full-suite run).
      await registry().deps.compliance!.outcomes!.record({
        runId: 'manual-run-1',
        agentUrl: agent.url,
        storyboardId: 'creative_template',
        adcpVersion: '3.1.19',
        status: 'passed',
        trigger: 'manual',
        stepsPassed: 3,
        stepsFailed: 0,
        stepsSkipped: 0,
        startedAt: new Date(Date.now() + 60_000).toISOString(),
        finishedAt: new Date(Date.now() + 61_000).toISOString(),
      })
      const fixed = await api(registry(), 'getAgentCompliance', `${path}/compliance`)
      expect(fixed.body).toMatchObject({ status: 'passing', verified: false })
    },
  )

  it.skipIf(!backend)('opting out revokes every badge until a fresh passing full-suite run', async () => {
    running.launcher.plan(agent.url, PASSING)
    await api(registry(), 'requeueAgentForHeartbeat', `${path}/monitoring/requeue`, {
      method: 'POST',
      token: owner,
    })
    await eventually(
      async () => (await api(registry(), 'getAgentVerification', `${path}/verification`)).body.verified,
    )
    await running.launcher.idle()

    const out = await api(registry(), 'updateAgentComplianceOptOut', `${path}/compliance/opt-out`, {
      method: 'PUT',
      token: owner,
      body: { opt_out: true },
    })
    expect(out.body).toMatchObject({ compliance_opt_out: true, badge_requalification_required: true })
    expect((await api(registry(), 'getAgentCompliance', `${path}/compliance`)).body).toEqual({
      agent_url: agent.url,
      status: 'opted_out',
      lifecycle_stage: 'testing',
      compliance_opt_out: true,
      badge_requalification_required: true,
      verified: false,
      verified_badges: [],
    })
    expect((await api(registry(), 'getAgentVerification', `${path}/verification`)).body).toMatchObject({
      verified: false,
      badges: [],
    })
    expect((await svgOf(`${registry().url}${path}/badge/creative.svg`)).text).toContain('Not Verified')
    expect((await svgOf(`${registry().url}${path}/badge/creative/3.1.svg`)).text).toContain('Not Verified')
    expect((await api(registry(), 'getAgentBadgeEmbed', `${path}/badge/creative/embed`)).body.verified).toBe(
      false,
    )
    expect(
      (
        await api(registry(), 'updateAgentComplianceOptOut', `${path}/compliance/opt-out`, {
          method: 'PUT',
          token: owner,
          body: { opt_out: 'no' },
        })
      ).status,
    ).toBe(400)

    const back = await api(registry(), 'updateAgentComplianceOptOut', `${path}/compliance/opt-out`, {
      method: 'PUT',
      token: owner,
      body: { opt_out: false },
    })
    expect(back.body).toMatchObject({ compliance_opt_out: false, badge_requalification_required: true })
    // The earlier passing run does not count: still no badge.
    const detail = await api(registry(), 'getAgentCompliance', `${path}/compliance`)
    expect(detail.body).toMatchObject({
      status: 'passing',
      verified: false,
      badge_requalification_required: true,
    })
    await new Promise((resolve) => setTimeout(resolve, 5))
    await api(registry(), 'requeueAgentForHeartbeat', `${path}/monitoring/requeue`, {
      method: 'POST',
      token: owner,
    })
    await eventually(
      async () => (await api(registry(), 'getAgentVerification', `${path}/verification`)).body.verified,
    )
    const requalified = await api(registry(), 'getAgentCompliance', `${path}/compliance`)
    expect(requalified.body).toMatchObject({ verified: true, badge_requalification_required: false })
  })

  it.skipIf(!backend)('keeps the outbound request log (heartbeats, probes)', async () => {
    const log = await api(registry(), 'getAgentMonitoringRequests', `${path}/monitoring/requests`, {
      token: owner,
    })
    expect(log.status).toBe(200)
    expect(log.body.agent_url).toBe(agent.url)
    const types = new Set(log.body.requests.map((entry: { request_type: string }) => entry.request_type))
    expect(types).toEqual(new Set(['compliance_heartbeat', 'compliance_refresh', 'health_probe']))
    expect(log.body.count).toBe(log.body.requests.length)
    expect(log.body.total).toBe(log.body.count)
    const heartbeat = log.body.requests.find(
      (entry: { request_type: string }) => entry.request_type === 'compliance_heartbeat',
    )
    expect(heartbeat).toMatchObject({
      success: true,
      error_message: null,
      user_agent: 'adwire-registry-compliance',
    })
    const one = await api(registry(), 'getAgentMonitoringRequests', `${path}/monitoring/requests?limit=1`, {
      token: owner,
    })
    expect(one.body).toMatchObject({ count: 1, total: log.body.total })
    expect(one.body.requests[0].id).toBe(log.body.requests[0].id)
    const future = await api(
      registry(),
      'getAgentMonitoringRequests',
      `${path}/monitoring/requests?since=2999-01-01T00:00:00Z`,
      { token: owner },
    )
    expect(future.body).toMatchObject({ count: 0, total: 0, requests: [] })
    for (const query of ['limit=201', 'limit=0', 'since=yesterday']) {
      const refused = await api(
        registry(),
        'getAgentMonitoringRequests',
        `${path}/monitoring/requests?${query}`,
        {
          token: owner,
        },
      )
      expect(refused.status, query).toBe(400)
    }
    expect(
      (
        await api(registry(), 'getAgentMonitoringRequests', `${path}/monitoring/requests`, {
          token: stranger,
        })
      ).status,
    ).toBe(403)
  })

  it.skipIf(!backend)('answers 502 when the agent cannot be reached', async () => {
    const gone = await startAgent()
    await gone.close()
    const registered = await api(registry(), 'registerMemberAgent', '/api/me/agents', {
      token: owner,
      body: { url: gone.url, type: 'sales' },
    })
    expect(registered.status, JSON.stringify(registered.body)).toBe(201)
    const refreshed = await api(
      registry(),
      'refreshAgent',
      `/api/registry/agents/${encodeURIComponent(gone.url)}/refresh`,
      { method: 'POST', token: owner, body: {} },
    )
    expect(refreshed.status).toBe(502)
    expect(refreshed.body.error).toBe('probe_failed')
  })

  it('the well-formedness check refuses broken XML', () => {
    expect(xmlProblem('<svg><g></svg>')).toBeDefined()
    expect(xmlProblem('<svg a="1" a="2"/>')).toBeDefined()
    expect(xmlProblem('<svg>R&D</svg>')).toBeDefined()
    expect(xmlProblem('<svg/><svg/>')).toBeDefined()
    expect(xmlProblem('<svg x="1"><text>A &amp; B</text></svg>')).toBeUndefined()
  })

  if (!backend) it.skip(`${name}: no PostgreSQL (ADWIRE_TEST_POSTGRES_URL)`, () => {})
})
