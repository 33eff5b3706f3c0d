/**
 * The runner against a deliberately broken agent (test/broken-agent.ts, official MCP server SDK on 127.0.0.1):
 * each fault fails the step the bundle's storyboard aims at it, with the reason naming what was wrong.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { jwksResolver } from '@adwire/http-signatures'
import {
  loadBundle,
  runStoryboards,
  startWebhookReceiver,
  type RunResult,
  type StepResult,
} from '../src/index.js'
import { startBrokenAgent, type BrokenAgent, type Fault } from '../src/testing.js'

const bundle = loadBundle()
let agent: BrokenAgent | undefined
afterEach(async () => {
  await agent?.close()
  agent = undefined
})

async function run(
  faults: Fault[],
  storyboards: string[],
  extra: Partial<Parameters<typeof runStoryboards>[0]> = {},
): Promise<RunResult> {
  agent = await startBrokenAgent(faults)
  return runStoryboards({ agentUrl: agent.url, bundle, storyboards, stepTimeoutMs: 5_000, ...extra })
}

const step = (result: RunResult, id: string): StepResult => {
  const found = result.storyboards
    .flatMap((storyboard) => storyboard.steps)
    .find((candidate) => candidate.step_id === id)
  if (!found) throw new Error(`no step ${id}`)
  return found
}
const failedChecks = (result: StepResult) =>
  result.validations.filter((v) => !v.passed).map((v) => `${v.check}: ${v.detail}`)

describe('a broken agent fails the right steps', () => {
  it('a healthy answer passes capability discovery (the baseline the faults break)', async () => {
    const result = await run([], ['capability_discovery'])
    expect(result.storyboards[0]!.steps.map((s) => s.status)).toEqual(['passed', 'passed'])
  })

  it("takes the agent's /mcp endpoint URL as well as its base URL (never POST /mcp/mcp)", async () => {
    const seen: string[] = []
    const recording: typeof fetch = (input, init) => {
      seen.push(new URL(input instanceof Request ? input.url : String(input)).pathname)
      return fetch(input, init)
    }
    agent = await startBrokenAgent([])
    const result = await runStoryboards({
      agentUrl: `${agent.url}/mcp`,
      bundle,
      storyboards: ['capability_discovery'],
      stepTimeoutMs: 5_000,
      fetch: recording,
    })
    expect(result.storyboards[0]!.steps.map((s) => s.status)).toEqual(['passed', 'passed'])
    expect(seen.length).toBeGreaterThan(0)
    expect(seen.filter((path) => path.startsWith('/mcp/'))).toEqual([])
  })

  it('wrong status: an unauthenticated call answered 200 fails probe_unauth with the status it got', async () => {
    const result = await run(['wrong_status'], ['security_baseline'])
    const probe = step(result, 'probe_unauth')
    expect(probe.status).toBe('failed')
    expect(probe.http_status).toBe(200)
    expect(failedChecks(probe)).toEqual([
      'http_status_in: expected HTTP status in [401,403], got 200',
      expect.stringMatching(/^expect_error: expected an error, got success/),
    ])
  })

  it('the same probe passes when the agent answers 401 with WWW-Authenticate', async () => {
    const result = await run([], ['security_baseline'])
    const probe = step(result, 'probe_unauth')
    expect([probe.status, probe.http_status]).toEqual(['passed', 401])
  })

  it('missing field: get_capabilities fails field_present supported_protocols (and the schema)', async () => {
    const result = await run(['missing_field'], ['capability_discovery'])
    const get = step(result, 'get_capabilities')
    expect(get.status).toBe('failed')
    expect(failedChecks(get)).toContain('field_present: expected supported_protocols present, got absent')
    expect(
      failedChecks(get).some(
        (line) => line.startsWith('response_schema:') && line.includes('supported_protocols'),
      ),
    ).toBe(true)
    expect(get.request).toMatchObject({
      context: { correlation_id: 'capability_discovery--get_capabilities' },
    })
    expect(get.response).toMatchObject({ adcp: { major_versions: [3] } })
  })

  it('schema-invalid response: response_schema fails naming the field, the field checks still pass', async () => {
    const result = await run(['schema_invalid'], ['capability_discovery'])
    const get = step(result, 'get_capabilities')
    expect(get.status).toBe('failed')
    expect(failedChecks(get)).toHaveLength(1)
    expect(failedChecks(get)[0]).toMatch(
      /^response_schema: protocol\/get-adcp-capabilities-response\.json: .*\/adcp\/major_versions must be array/,
    )
  })

  it('no context echo: the correlation checks and the context echo contract fail', async () => {
    const result = await run(['no_context_echo'], ['capability_discovery'])
    const get = step(result, 'get_capabilities')
    expect(get.status).toBe('failed')
    expect(failedChecks(get)).toEqual([
      'field_present: expected context present, got absent',
      'field_value: expected context.correlation_id = "capability_discovery--get_capabilities", got absent',
      'context_echo: expected context {"correlation_id":"capability_discovery--get_capabilities"}, got absent',
    ])
  })

  it('a hung agent fails the step on the step timeout and the run goes on', async () => {
    const result = await run(['hang'], ['security_baseline'], { stepTimeoutMs: 300 })
    const probe = step(result, 'probe_api_key')
    expect(probe.status).toBe('failed')
    expect(probe.error).toMatch(/list_creatives timed out after 300 ms/)
    expect(step(result, 'assert_mechanism').status).toBe('failed')
  })

  it('unsigned webhook: delivered, received and retried, but the RFC 9421 check fails', async () => {
    agent = await startBrokenAgent([], { products: true })
    const webhooks = await startWebhookReceiver({ keys: jwksResolver({ keys: [] }) })
    try {
      const result = await runStoryboards({
        agentUrl: agent.url,
        bundle,
        storyboards: ['webhook_emission'],
        webhooks,
        stepTimeoutMs: 3_000,
      })
      // The partial trigger is completed with the agent's one product (found by the runner's own get_products).
      const trigger = step(result, 'trigger_webhook_operation')
      expect(trigger.request_completion).toEqual({
        fields: ['brand', 'account', 'start_time', 'end_time', 'packages'],
        products_from: 'get_products',
      })
      expect((trigger.request as { packages: unknown }).packages).toEqual([
        { product_id: 'broken_display', pricing_option_id: 'cpm_fixed', budget: 1000 },
      ])
      expect(step(result, 'expect_webhook_presence').status).toBe('passed')
      // Retries arrive (the receiver answers the first three 503) with a stable key, but none is signed: the
      // retry step verifies RFC 9421 on every delivery and fails on that alone …
      const retry = step(result, 'expect_key_stable_across_retries')
      expect(retry.status).toBe('failed')
      expect(failedChecks(retry)).toEqual([
        'webhook_signature: signature_invalid: webhook_signature_header_malformed',
      ])
      // … and, stateful, it cascades onto the signature phase.
      expect(step(result, 'expect_signature_valid').skip).toEqual({
        reason: 'prerequisite_failed',
        detail: 'step expect_key_stable_across_retries did not pass',
      })
    } finally {
      await webhooks.close()
    }
  })

  it('a partial create_media_buy that cannot be completed fails before transport (no get_products)', async () => {
    agent = await startBrokenAgent([])
    const webhooks = await startWebhookReceiver({ keys: jwksResolver({ keys: [] }) })
    try {
      const result = await runStoryboards({
        agentUrl: agent.url,
        bundle,
        storyboards: ['webhook_emission'],
        webhooks,
        stepTimeoutMs: 3_000,
      })
      const trigger = step(result, 'trigger_webhook_operation')
      expect(trigger.status).toBe('failed')
      expect(failedChecks(trigger)).toEqual([
        'request_completion: the agent does not advertise get_products, so no product is known to buy',
      ])
      expect(step(result, 'expect_webhook_presence').skip?.reason).toBe('prerequisite_failed')
    } finally {
      await webhooks.close()
    }
  })

  it('without a receiver, webhook-emission is not run (requirement_unmet webhook_receiver)', async () => {
    const result = await run([], ['webhook_emission'])
    expect(result.storyboards[0]!.skip).toEqual({ reason: 'requirement_unmet', detail: 'webhook_receiver' })
  })
})

describe('the runner stays bounded', () => {
  it('a response over the size cap fails its step, not the runner', async () => {
    const result = await run(['huge'], ['security_baseline'], { maxResponseBytes: 256 * 1024 })
    const probe = step(result, 'probe_api_key')
    expect(probe.status).toBe('failed')
    expect(probe.error).toMatch(/exceeds the 262144-byte limit/)
  })

  it('the run deadline skips what is left and says so', async () => {
    const result = await run([], ['capability_discovery', 'security_baseline'], { runTimeoutMs: 1 })
    expect(result.timed_out).toBe(true)
    const skipped = result.storyboards
      .flatMap((storyboard) => storyboard.steps)
      .filter((s) => s.skip?.detail === 'the run deadline passed')
    expect(skipped.length).toBeGreaterThan(0)
  })

  it('refuses a redirect from a public agent to a private address, and follows one between public hosts', async () => {
    const { createRunnerFetch } = await import('../src/http.js')
    const seen: string[] = []
    const network: typeof fetch = async (input) => {
      const url = String(input)
      seen.push(url)
      if (url.startsWith('https://agent.example/'))
        return new Response(null, { status: 307, headers: { location: 'http://10.0.0.7/mcp' } })
      if (url.startsWith('https://moved.example/'))
        return new Response(null, { status: 307, headers: { location: 'https://agent2.example/mcp' } })
      return Response.json({ ok: true })
    }
    const runner = createRunnerFetch({
      credentials: { type: 'bearer', token: 't' },
      agentUrl: 'https://agent.example',
      maxResponseBytes: 1024,
      fetch: network,
    })
    await expect(runner.fetch('https://agent.example/mcp', { method: 'POST', body: '{}' })).rejects.toThrow(
      /refused a redirect to the local address http:\/\/10\.0\.0\.7/,
    )
    const moved = await runner.fetch('https://moved.example/mcp', { method: 'POST', body: '{}' })
    expect([moved.status, seen.at(-1)]).toEqual([200, 'https://agent2.example/mcp'])
    const local = createRunnerFetch({
      credentials: { type: 'none' },
      agentUrl: 'http://127.0.0.1:1',
      maxResponseBytes: 1024,
      fetch: network,
    })
    await expect(
      local.fetch('https://agent.example/mcp', { method: 'POST', body: '{}' }),
    ).resolves.toMatchObject({ status: 200 })
  })
})
