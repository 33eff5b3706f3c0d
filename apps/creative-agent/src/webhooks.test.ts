/**
 * Async builds: build_creative with `ext.adwire.async` answers `submitted`, then pushes `working` and
 * `completed` (or `failed`) webhooks, signed RFC 9421 with the agent's key from the durable outbox, to a
 * receiver from @adwire/webhooks on a real HTTP server that finds the agent's key through its brand.json and
 * JWKS (or, from the MCP endpoint, through get_adcp_capabilities: brand_json_url and key_origins). Over MCP (push_notification_config, MCP-shape envelope) and A2A (taskPushNotificationConfig, the
 * earlier 3.x configuration.pushNotificationConfig, legacy HMAC authentication verified by an HMAC receiver,
 * and a push_notification_config inside the typed input, which gets the MCP-shape envelope).
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import {
  SignatureError,
  brandJsonResolver,
  capabilitiesBootstrapResolver,
  type CapabilitiesBootstrapResolver,
  type KeyResolver,
} from '@adwire/http-signatures'
import { createSafeFetch } from '@adwire/http-signatures/node'
import type { SafeFetch } from '@adwire/http-signatures'
import { openSqliteStores, type SqliteStores } from '@adwire/store-sqlite'
import { a2aResponseData, a2aSendRequest, getAgentCapabilities } from '@adwire/agent-client'
import { createWebhookReceiver, type ReceivedEvent } from '@adwire/webhooks'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningCreativeAgent } from './service.js'
import {
  BUYER_TOKEN,
  a2aSend,
  artifactData,
  brief,
  expectOfficial,
  fid,
  mcpCall,
  newKey,
  startTestAgent,
  tempDir,
  until,
  type Body,
} from './test-support.js'
import { officialErrors } from '@adwire/conformance/official'

const HMAC_SECRET = 'buyer-hmac-secret-for-creative-tests-0123'

let agent: RunningCreativeAgent
let receiverStores: SqliteStores
/** The capabilities bootstrap of the https deployment (set by its test). */
let bootstrapped: CapabilitiesBootstrapResolver | undefined
/** The agent's keys as a verifier enforcing the 3.0 key-purpose rule sees them. */
let keys30: KeyResolver
let receiverServer: Server
let hooks: string
const events: ReceivedEvent[] = []

beforeAll(async () => {
  // One delivery at a time, so that each task's pushes arrive in the order they were made and the tests can
  // check every push's content (with more in flight a `completed` may overtake `working`, which the buyer then
  // answers `stale`: the first MCP test accepts either order).
  agent = await startTestAgent({}, { senderConcurrency: 1 })
  receiverStores = openSqliteStores({ path: join(tempDir(), 'receiver.sqlite') })
  // The buyer knows the agent by its URL and finds its key the AdCP way: brand.json, then the jwks_uri.
  const keyFetch = createSafeFetch({ allowHttp: true, allowLoopback: true })
  const keys = brandJsonResolver({ agentUrl: agent.publicUrl, fetch: keyFetch })
  // A verifier written to the 3.0 rules (a test-only copy of the rule): a webhook signature must come from a
  // key whose JWK says `adcp_use: "webhook-signing"`; a request-signing key is refused.
  keys30 = {
    async resolve(keyid, context) {
      const found = await keys.resolve(keyid, context)
      if (found && found.jwk.adcp_use !== 'webhook-signing')
        throw new SignatureError(
          'webhook_signature_key_purpose_invalid',
          `3.0 rule: adcp_use ${String(found.jwk.adcp_use)} may not sign webhooks`,
          8,
        )
      return found
    },
  }
  const receiver = createWebhookReceiver({
    registration: (request) => {
      const path = new URL(request.url).pathname
      // A buyer that asked for legacy HMAC-SHA256 on its A2A registration accepts only that.
      if (path.endsWith('/a2a-hmac'))
        return { id: 'buyer-a2a-hmac', auth: { mode: 'hmac', secret: HMAC_SECRET }, shape: 'a2a' }
      if (path.endsWith('/v30'))
        return { id: 'buyer-v30', auth: { mode: 'rfc9421', keys: keys30 }, shape: 'mcp' }
      if (path.endsWith('/via-capabilities'))
        return { id: 'buyer-capabilities', auth: { mode: 'rfc9421', keys: bootstrapped! }, shape: 'mcp' }
      const shape = path.endsWith('/a2a') ? 'a2a' : 'mcp'
      return { id: `buyer-${shape}`, auth: { mode: 'rfc9421', keys }, shape }
    },
    claims: receiverStores.claims,
    convergence: receiverStores.convergence,
    replayStore: receiverStores.replay,
    publish: async (event) => void events.push(event),
  })
  receiverServer = await new Promise<Server>((resolve) => {
    const started = serve(
      { fetch: (request) => receiver.handle(request), port: 0, hostname: '127.0.0.1' },
      () => resolve(started as Server),
    ) as Server
  })
  hooks = `http://127.0.0.1:${(receiverServer.address() as AddressInfo).port}/webhooks`
})

afterAll(async () => {
  await agent.close()
  await new Promise<void>((resolve) => receiverServer.close(() => resolve()))
  receiverStores.close()
})

const ofTask = (taskId: string) => events.filter((event) => event.taskId === taskId)

/**
 * One raw A2A JSON-RPC call (`SendMessage` on 1.0, `message/send` on 0.3) with the given `configuration`,
 * for registrations the typed SDK client cannot send (the earlier 3.x key, AdCP's `schemes` array): the AdCP
 * data, with `a2a_task_id`, the A2A Task it created (which its A2A pushes name).
 */
async function a2aRaw(
  version: '1.0' | '0.3',
  input: Record<string, unknown>,
  configuration: Record<string, unknown>,
): Promise<Body> {
  const { headers, body } = a2aSendRequest({ skill: 'build_creative', input, version, configuration })
  const response = await fetch(`${agent.url}/a2a`, {
    method: 'POST',
    headers: { ...headers, authorization: `Bearer ${BUYER_TOKEN}` },
    body: JSON.stringify(body),
  })
  const json = (await response.json()) as { result?: { task?: { id?: string }; id?: string } }
  return { ...a2aResponseData(json), a2a_task_id: json.result?.task?.id ?? json.result?.id }
}

/** Waits for the working and completed pushes of `taskId` and returns them. */
async function pushesOf(taskId: string): Promise<ReceivedEvent[]> {
  await until(() => ofTask(taskId).length >= 2)
  const delivered = ofTask(taskId)
  expect(delivered.map((event) => event.status)).toEqual(['working', 'completed'])
  return delivered
}

describe('async build over MCP', () => {
  it('answers submitted, then delivers signed working and completed webhooks the receiver verifies', async () => {
    const context = { correlation_id: 'async-mcp' }
    const args = {
      idempotency_key: newKey(),
      ...brief(agent),
      ext: { adwire: { async: true } },
      push_notification_config: { url: `${hooks}/mcp`, operation_id: 'op-build-1' },
      context,
    }
    const answer = (await mcpCall(agent, BUYER_TOKEN, 'build_creative', args)).structuredContent
    expectOfficial('media-buy/build-creative-response.json', answer)
    expect(answer).toMatchObject({ status: 'submitted', task_id: expect.any(String), context })

    // Both webhooks are acknowledged by the buyer. The sender delivers them concurrently, so `completed` may
    // arrive first: the receiver then answers the later `working` 200 `stale` and does not publish it, as
    // terminal convergence requires. Either way `completed` is published once and nothing after it.
    await until(() => ofTask(answer.task_id).some((event) => event.status === 'completed'))
    const acknowledged = async () =>
      new Set(
        (await agent.runtime.deps.sender.activity('op-build-1', 100))
          .filter((row) => row.status === 'success')
          .map((row) => row.idempotency_key),
      ).size
    for (let waited = 0; (await acknowledged()) < 2 && waited < 20_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50))
    expect(await acknowledged()).toBe(2)
    const delivered = ofTask(answer.task_id)
    expect([['working', 'completed'], ['completed']]).toContainEqual(delivered.map((event) => event.status))
    for (const event of delivered) {
      // Published only after the RFC 9421 signature verified against the key found through brand.json;
      // the sender identity is the agent URL the resolver matched there.
      expect(event.sender).toBe(`rfc9421:${agent.publicUrl}`)
      expect(event.operationId).toBe('op-build-1')
      expect(event.taskType).toBe('build_creative')
      expectOfficial('core/mcp-webhook-payload.json', event.payload)
      expect(event.payload.context).toEqual(context)
      // The envelope's `protocol` (enums/adcp-protocol.json), which the official schema checks.
      expect(event.payload.protocol).toBe('creative')
      expect(
        officialErrors('core/mcp-webhook-payload.json', { ...event.payload, protocol: 'creatives' }),
      ).not.toEqual([])
    }
    if (delivered.length === 2)
      expect(new TextDecoder().decode(delivered[0]!.body)).toContain('"percentage":0')
    const result = delivered.at(-1)!.payload.result as Body
    expectOfficial('media-buy/build-creative-response.json', result)
    expect(result.creative_manifest.format_id).toEqual(fid(agent, 'display_300x250_image'))
    expect(result.context).toEqual(context)

    // A replay answers the cached submitted response and fires nothing new.
    const replay = (await mcpCall(agent, BUYER_TOKEN, 'build_creative', args)).structuredContent
    expect(replay).toMatchObject({ status: 'submitted', task_id: answer.task_id, replayed: true })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(ofTask(answer.task_id)).toHaveLength(delivered.length)
  })

  it('signs webhooks with the webhook-signing key, which a verifier enforcing the 3.0 key-purpose rule accepts', async () => {
    const jwks = (await (await fetch(`${agent.url}/.well-known/jwks.json`)).json()) as Body
    expect(jwks.keys.map((key: Body) => key.adcp_use).sort()).toEqual(['request-signing', 'webhook-signing'])
    expect(new Set(jwks.keys.map((key: Body) => key.kid)).size).toBe(2)
    // The rule bites: the request-signing key would be refused on a webhook.
    const requestKey = jwks.keys.find((key: Body) => key.adcp_use === 'request-signing')
    await expect(
      keys30.resolve(requestKey.kid, { profile: 'webhook', now: Date.now() / 1000 }),
    ).rejects.toThrow(/3\.0 rule/)
    const answer = (
      await mcpCall(agent, BUYER_TOKEN, 'build_creative', {
        idempotency_key: newKey(),
        ...brief(agent),
        ext: { adwire: { async: true } },
        push_notification_config: { url: `${hooks}/v30`, operation_id: 'op-v30-1' },
      })
    ).structuredContent
    expect(answer).toMatchObject({ status: 'submitted' })
    await until(() => ofTask(answer.task_id).some((event) => event.status === 'completed'))
    expect(ofTask(answer.task_id).every((event) => event.registrationId === 'buyer-v30')).toBe(true)
    expect(ofTask(answer.task_id).at(-1)).toMatchObject({ status: 'completed', terminal: true })
  })

  it('delivers webhooks a buyer verifies with keys found through get_adcp_capabilities (an https deployment)', async () => {
    // get_adcp_capabilities names identity.brand_json_url only on https; the buyer reaches this deployment's
    // public https URL through a fetch routed to the local listener.
    const PUBLIC = 'https://creative.adwire.test'
    const deployed = await startTestAgent({ PUBLIC_URL: PUBLIC }, { senderConcurrency: 1 })
    try {
      const keyFetch = createSafeFetch({ allowHttp: true, allowLoopback: true })
      const toLocal = (url: string) => url.replace(PUBLIC, deployed.url)
      const routedKeys: SafeFetch = (url, init) => keyFetch(toLocal(url), init)
      const routed: typeof fetch = (input, init) =>
        fetch(toLocal(input instanceof Request ? input.url : String(input)), init)
      bootstrapped = capabilitiesBootstrapResolver({
        agentUrl: `${PUBLIC}/mcp`,
        purpose: 'webhook_signing',
        getCapabilities: (agentUrl, { signal }) => getAgentCapabilities(agentUrl, { signal, fetch: routed }),
        fetch: routedKeys,
      })
      const answer = (
        await mcpCall(deployed, BUYER_TOKEN, 'build_creative', {
          idempotency_key: newKey(),
          ...brief(deployed),
          ext: { adwire: { async: true } },
          push_notification_config: { url: `${hooks}/via-capabilities`, operation_id: 'op-caps-1' },
        })
      ).structuredContent
      expect(answer).toMatchObject({ status: 'submitted' })
      await until(() => ofTask(answer.task_id).some((event) => event.status === 'completed'))
      for (const event of ofTask(answer.task_id)) {
        expect(event.registrationId).toBe('buyer-capabilities')
        // The signer is the MCP endpoint's agents[] entry, reached through the capabilities' brand_json_url.
        expect(event.sender).toBe(`rfc9421:${PUBLIC}/mcp`)
      }
      const discovery = await bootstrapped.discover()
      expect(discovery).toMatchObject({
        declaredBrandJsonUrl: `${PUBLIC}/.well-known/brand.json`,
        jwksUri: `${PUBLIC}/.well-known/jwks.json`,
        keyOrigin: PUBLIC,
      })
    } finally {
      await deployed.close()
    }
  })

  it('pushes failed with the AdCP error when the build fails after submitted', async () => {
    const answer = (
      await mcpCall(agent, BUYER_TOKEN, 'build_creative', {
        idempotency_key: newKey(),
        target_format_id: fid(agent, 'display_728x90_image'),
        creative_manifest: {
          format_id: fid(agent, 'display_300x250_image'),
          assets: {
            click_url: { asset_type: 'url', url: 'https://acme.example/', url_type: 'clickthrough' },
          },
        },
        ext: { adwire: { async: true } },
        push_notification_config: { url: `${hooks}/mcp`, operation_id: 'op-build-2' },
      })
    ).structuredContent
    expect(answer.status).toBe('submitted')
    await until(() => ofTask(answer.task_id).length >= 2)
    const [, failed] = ofTask(answer.task_id)
    expect(failed!.status).toBe('failed')
    expectOfficial('core/mcp-webhook-payload.json', failed!.payload)
    expect((failed!.payload.result as Body).errors[0]).toMatchObject({
      code: 'VALIDATION_ERROR',
      field: 'creative_manifest.assets.image',
    })
  })

  it('stays synchronous and sends no webhook when async is not asked for, even with a push registration', async () => {
    const before = events.length
    const answer = (
      await mcpCall(agent, BUYER_TOKEN, 'build_creative', {
        idempotency_key: newKey(),
        ...brief(agent),
        push_notification_config: { url: `${hooks}/mcp`, operation_id: 'op-sync' },
      })
    ).structuredContent
    expect(answer).toMatchObject({ status: 'completed', creative_manifest: expect.any(Object) })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(events.length).toBe(before)
  })
})

describe('async build over A2A', () => {
  it('completes the A2A task with the submitted response and pushes A2A-shape webhooks', async () => {
    const task = await a2aSend(
      agent,
      BUYER_TOKEN,
      'build_creative',
      {
        idempotency_key: newKey(),
        ...brief(agent, 'display_728x90_html'),
        ext: { adwire: { async: true } },
        context: { correlation_id: 'async-a2a' },
      },
      { url: `${hooks}/a2a`, token: 'a2a-push-token-0123456789' },
    )
    const answer = artifactData(task)
    expectOfficial('media-buy/build-creative-response.json', answer)
    expect(answer).toMatchObject({ status: 'submitted', task_id: expect.any(String) })
    // The A2A pushes name the A2A Task the client holds.
    await until(() => ofTask(task.id).length >= 2)
    const delivered = ofTask(task.id)
    expect(delivered.map((event) => [event.shape, event.status, event.sender])).toEqual([
      ['a2a', 'working', `rfc9421:${agent.publicUrl}`],
      ['a2a', 'completed', `rfc9421:${agent.publicUrl}`],
    ])
    expect(delivered[1]!.data).toMatchObject({
      creative_manifest: { format_id: fid(agent, 'display_728x90_html') },
      context: { correlation_id: 'async-a2a' },
    })
  })

  it('registers the earlier 3.x key `configuration.pushNotificationConfig` (A2A 0.3 and 1.0 wires)', async () => {
    for (const version of ['0.3', '1.0'] as const) {
      const answer = await a2aRaw(
        version,
        { idempotency_key: newKey(), ...brief(agent), ext: { adwire: { async: true } } },
        { pushNotificationConfig: { url: `${hooks}/a2a`, id: `earlier-${version}` } },
      )
      expect(answer).toMatchObject({ status: 'submitted', task_id: expect.any(String) })
      const delivered = await pushesOf(answer.a2a_task_id)
      for (const event of delivered) {
        expect(event.shape).toBe('a2a')
        expect(event.sender).toBe(`rfc9421:${agent.publicUrl}`)
      }
      expectOfficial('media-buy/build-creative-response.json', delivered[1]!.data)
    }
  })

  it('forwards legacy HMAC-SHA256 authentication, so an HMAC receiver verifies the pushes', async () => {
    const answer = await a2aRaw(
      '1.0',
      { idempotency_key: newKey(), ...brief(agent), ext: { adwire: { async: true } } },
      {
        taskPushNotificationConfig: {
          url: `${hooks}/a2a-hmac`,
          authentication: { schemes: ['HMAC-SHA256'], credentials: HMAC_SECRET },
        },
      },
    )
    const delivered = await pushesOf(answer.a2a_task_id)
    for (const event of delivered) {
      expect(event.registrationId).toBe('buyer-a2a-hmac')
      expect(event.sender).toBe('hmac:buyer-a2a-hmac')
    }
  })

  it('sends a push_notification_config given in the typed A2A input as signed MCP-shape envelopes', async () => {
    const context = { correlation_id: 'a2a-typed-push' }
    const task = await a2aSend(agent, BUYER_TOKEN, 'build_creative', {
      idempotency_key: newKey(),
      ...brief(agent),
      ext: { adwire: { async: true } },
      push_notification_config: { url: `${hooks}/mcp`, operation_id: 'op-a2a-typed' },
      context,
    })
    const answer = artifactData(task)
    expect(answer).toMatchObject({ status: 'submitted', context })
    const delivered = await pushesOf(answer.task_id)
    for (const event of delivered) {
      expect(event.shape).toBe('mcp')
      expect(event.sender).toBe(`rfc9421:${agent.publicUrl}`)
      expect(event.operationId).toBe('op-a2a-typed')
      expectOfficial('core/mcp-webhook-payload.json', event.payload)
      expect(event.payload).toMatchObject({ protocol: 'creative', context })
    }
  })
})
