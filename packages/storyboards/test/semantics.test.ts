/**
 * The 3.1.19 semantics on real storyboards of the vendored bundle, against the fixture agent
 * (`@adwire/storyboards/testing`, official MCP server SDK on 127.0.0.1): controller seeding, skip_if, test-kit
 * credentials and the agent-URL placeholders.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { loadBundle, runStoryboards, type RunResult } from '../src/index.js'
import { startBrokenAgent, type BrokenAgent } from '../src/testing.js'

const bundle = loadBundle()
let agent: BrokenAgent | undefined
afterEach(async () => {
  await agent?.close()
  agent = undefined
})

const steps = (result: RunResult) =>
  Object.fromEntries(result.storyboards[0]!.steps.map((step) => [step.step_id, step]))

describe('controller_seeding', () => {
  it('seeds the storyboard fixtures through comply_test_controller in dependency order before the phases', async () => {
    agent = await startBrokenAgent([], { controller: 'record' })
    await runStoryboards({ agentUrl: agent.url, bundle, storyboards: ['schema_validation'] })
    // The id fields lifted into params, the rest under params.fixture, and the sandbox assertion on each call.
    expect(agent.controllerCalls.slice(0, 2)).toEqual([
      {
        scenario: 'seed_product',
        params: {
          product_id: 'test-product',
          fixture: expect.objectContaining({ delivery_type: 'non_guaranteed' }),
        },
        account: { sandbox: true },
      },
      {
        scenario: 'seed_pricing_option',
        params: {
          product_id: 'test-product',
          pricing_option_id: 'test-pricing',
          fixture: expect.objectContaining({ pricing_model: 'cpm' }),
        },
        account: { sandbox: true },
      },
    ])
    expect(
      (agent.controllerCalls[0]!.params as { fixture: Record<string, unknown> }).fixture,
    ).not.toHaveProperty('product_id')
  })

  it('seeds creative formats (seed_creative_format) and keeps a payload the entry already nests under fixture', async () => {
    agent = await startBrokenAgent([], { controller: 'record' })
    await runStoryboards({
      agentUrl: agent.url,
      bundle,
      storyboards: ['universal/pagination-integrity-creative-formats'],
    })
    expect(agent.controllerCalls[0]).toEqual({
      scenario: 'seed_creative_format',
      params: {
        format_id: 'pagination_integrity_format_1',
        fixture: { name: 'Pagination Integrity Format A', type: 'display' },
      },
      account: { sandbox: true },
    })
  })

  it('grades the storyboard not_applicable (fixture_seed_unsupported) when the controller lacks the seed scenario', async () => {
    agent = await startBrokenAgent([], { controller: 'unknown_scenario' })
    const result = await runStoryboards({ agentUrl: agent.url, bundle, storyboards: ['schema_validation'] })
    expect(result.storyboards[0]).toMatchObject({
      status: 'not_applicable',
      skip: {
        reason: 'not_applicable',
        detail: expect.stringMatching(/^fixture_seed_unsupported: .*seed_product/),
      },
    })
  })

  it('runs without seeding when the agent offers no controller (steps then grade on their own)', async () => {
    agent = await startBrokenAgent([])
    const result = await runStoryboards({ agentUrl: agent.url, bundle, storyboards: ['schema_validation'] })
    expect(steps(result).get_capabilities!.status).toBe('passed')
    expect(steps(result).get_products_schema!.skip).toMatchObject({ reason: 'missing_tool' })
  })
})

describe('skip_if and test-kit credentials (universal/security.yaml)', () => {
  it('runs the api_key phase with the kit key and a random invalid one, and skips the Basic phase the kit does not configure', async () => {
    agent = await startBrokenAgent([])
    const result = await runStoryboards({ agentUrl: agent.url, bundle, storyboards: ['security_baseline'] })
    const byId = steps(result)
    expect(byId.probe_api_key!.status).toBe('passed')
    expect([byId.probe_invalid_api_key!.status, byId.probe_invalid_api_key!.http_status]).toEqual([
      'passed',
      401,
    ])
    expect(byId.probe_basic!.skip).toEqual({
      reason: 'not_applicable',
      detail: 'skip_if: !test_kit.auth.basic',
    })
    expect(byId.assert_mechanism!.status).toBe('passed')
  })

  it('an operator overlay on the kit changes what skip_if sees', async () => {
    agent = await startBrokenAgent([])
    const result = await runStoryboards({
      agentUrl: agent.url,
      bundle,
      storyboards: ['security_baseline'],
      testKitOverrides: { auth: { probe_task: 'list_creatives' } },
    })
    // Without auth.api_key the api_key phase is skipped, so no mechanism is verified: the assertion fails.
    expect(steps(result).probe_api_key!.skip).toMatchObject({ reason: 'not_applicable' })
    expect(steps(result).assert_mechanism!.status).toBe('failed')
  })
})

describe('advisory vs required (universal/version-negotiation.yaml)', () => {
  it('reports failed advisory checks without failing their step', async () => {
    agent = await startBrokenAgent([])
    const result = await runStoryboards({ agentUrl: agent.url, bundle, storyboards: ['version_negotiation'] })
    const advisory = result.storyboards[0]!.steps.flatMap((step) =>
      step.validations
        .filter((v) => v.severity === 'advisory' && !v.passed)
        .map((v) => [step.step_id, step.status, v.check]),
    )
    expect(advisory.length).toBeGreaterThan(0)
    expect(result.summary.validations_advisory_failed).toBe(advisory.length)
    expect(advisory).toContainEqual(['get_capabilities_with_version', 'passed', 'envelope_field_present'])
  })
})
