/**
 * The storyboard catalog (the vendored 3.1.19 bundle as the document shows it), the registry's JWKS, and a run the
 * SSRF policy stops: a registry without ALLOW_PRIVATE_AGENTS never connects to a loopback agent, and the run
 * says so in its stored result.
 */
import { complianceDir, schemasDir } from '@adwire/adcp-data'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { api, startTestRegistry, type TestRegistry } from '../testing/registry.js'
import { storyboardBundle } from './runs-catalog.js'

let test: TestRegistry
let key: string

beforeAll(async () => {
  test = await startTestRegistry({ kind: 'sqlite' }, { seed: false })
  key = (await test.registry.createOrg('Catalog')).apiKey
}, 30_000)

afterAll(async () => {
  await test?.registry.close()
  await test?.cleanup()
})

describe('the storyboard catalog', () => {
  it('is the bundle @adwire/adcp-data ships, with its schemas (no copy of the repository folder)', () => {
    expect(storyboardBundle().dir).toBe(complianceDir)
    expect(storyboardBundle().schemasDir).toBe(schemasDir)
  })

  it('lists the 3.1.19 storyboards once each, filtered by category', async () => {
    const all = await api(test.registry, 'listStoryboards', '/api/storyboards')
    expect(all.body).toMatchObject({ adcp_version: '3.1.19', requested_compliance_target: '3.1', count: 122 })
    const ids = all.body.storyboards.map((storyboard: { id: string }) => storyboard.id)
    expect(new Set(ids).size).toBe(ids.length)
    const creative = await api(
      test.registry,
      'listStoryboards',
      '/api/storyboards?category=creative&compliance_target=3.1.19',
    )
    expect(creative.body.count).toBeGreaterThan(0)
    expect(creative.body.count).toBeLessThan(all.body.count)
    expect(
      creative.body.storyboards.every(
        (storyboard: { category: string }) => storyboard.category === 'creative',
      ),
    ).toBe(true)
    const capability = all.body.storyboards.find(
      (storyboard: { id: string }) => storyboard.id === 'capability_discovery',
    )
    expect(capability).toMatchObject({
      category: 'capability_discovery',
      interaction_model: 'media_buy_seller',
      phase_count: 1,
    })
    expect(capability.examples).toContain('Publisher platforms')
    expect(
      (await api(test.registry, 'listStoryboards', '/api/storyboards?compliance_target=2.0')).status,
    ).toBe(400)
  })

  it('shows a storyboard with its phases, steps and test kit, and its first step', async () => {
    const detail = await api(test.registry, 'getStoryboard', '/api/storyboards/capability_discovery')
    expect(detail.body.storyboard).toMatchObject({
      id: 'capability_discovery',
      track: 'core',
      agent: { interaction_model: 'media_buy_seller' },
    })
    expect(detail.body.storyboard.phases[0].steps[0]).toMatchObject({
      id: 'get_capabilities',
      task: 'get_adcp_capabilities',
    })
    expect(detail.body.storyboard.phases[0].steps[0].expected_output).toMatch(/capability declaration/)
    expect(detail.body.test_kit.auth.api_key).toBe('demo-acme-outdoor-v1')
    // By bundle key too.
    expect(
      (await api(test.registry, 'getStoryboard', '/api/storyboards/universal%2Fcapability-discovery')).body
        .storyboard.id,
    ).toBe('capability_discovery')
    const first = await api(
      test.registry,
      'getStoryboardFirstStep',
      '/api/storyboards/capability_discovery/first-step',
    )
    expect(first.body).toMatchObject({
      storyboard: { id: 'capability_discovery', title: 'Capability discovery' },
      step: { id: 'get_capabilities', phase_id: 'protocol_discovery', task: 'get_adcp_capabilities' },
    })
    expect(first.body.step.sample_request.context.correlation_id).toBe(
      'capability_discovery--get_capabilities',
    )
    expect((await api(test.registry, 'getStoryboard', '/api/storyboards/nope')).status).toBe(404)
    expect(
      (await api(test.registry, 'getStoryboardFirstStep', '/api/storyboards/nope/first-step')).status,
    ).toBe(404)
  })

  it('serves the public signing key the OAuth server signs with', async () => {
    const jwks = await api(test.registry, 'getJwks', '/api/.well-known/jwks.json')
    const oauth = (await (await fetch(`${test.registry.url}/.well-known/jwks.json`)).json()) as {
      keys: unknown[]
    }
    expect(jwks.body.keys).toEqual(oauth.keys)
    expect(jwks.body.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' })
    expect(jwks.body.keys[0].d).toBeUndefined()
  })
})

describe('a run the SSRF policy stops', () => {
  it('never connects to a loopback agent without ALLOW_PRIVATE_AGENTS and stores why', async () => {
    const agent = 'http://127.0.0.1:9/mcp'
    expect(
      (
        await api(test.registry, 'registerMemberAgent', '/api/me/agents', {
          token: key,
          body: { url: agent, type: 'creative' },
        })
      ).status,
    ).toBe(201)
    const path = `/api/registry/agents/${encodeURIComponent(agent)}`
    const run = await api(test.registry, 'runStoryboard', `${path}/storyboard/capability_discovery/run`, {
      method: 'POST',
      token: key,
    })
    expect(run.status).toBe(200)
    expect(run.body.storyboard_status).toMatchObject({ status: 'failing', steps_passed: 0 })
    expect(run.body.storyboard_status.first_failure_message).toMatch(/refused|not allowed|https/i)
    const history = await api(test.registry, 'getAgentComplianceHistory', `${path}/compliance/history`)
    expect(history.body.runs[0]).toMatchObject({
      id: run.body.run_id,
      overall_status: 'error',
      state: 'failed',
    })
    const probe = await api(test.registry, 'getApplicableStoryboards', `${path}/applicable-storyboards`, {
      token: key,
    })
    expect([probe.status, probe.body.reason]).toEqual([500, 'network'])
  }, 30_000)
})
