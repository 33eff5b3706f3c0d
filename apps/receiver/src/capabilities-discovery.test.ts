/**
 * Registrations that find the seller's keys through its agent's get_adcp_capabilities (the canonical
 * bootstrap): a real agent server (MCP and A2A) answers the capabilities, a real key server serves brand.json
 * and the JWKS, and signed deliveries are verified with what the chain found.
 */
import type { AddressInfo } from 'node:net'
import { createAgentServer, defineTask } from '@adwire/agent-server'
import { generateSigningKey, type AdcpJwk, type Jwks } from '@adwire/http-signatures'
import { serve, type ServerType } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { RunningReceiver } from './service.js'
import {
  api,
  envelope,
  eventually,
  json,
  localServer,
  sendSigned,
  startTestReceiver,
  type LocalServer,
} from './testing/receiver.js'

let receiver: RunningReceiver
let keyServer: LocalServer
let agent: { url: string; close(): Promise<void> }
let privateJwk: AdcpJwk
let jwks: Jwks
/** What the agent's get_adcp_capabilities declares as its webhook key origin (changed by a test). */
let keyOrigin: string | undefined

/** An agent server on 127.0.0.1 whose only task is get_adcp_capabilities. */
async function startAgent(): Promise<{ url: string; close(): Promise<void> }> {
  let handler: (request: Request) => Promise<Response> = async () => new Response(null, { status: 503 })
  const server: ServerType = await new Promise((resolve) => {
    const started = serve({ fetch: (request) => handler(request), port: 0, hostname: '127.0.0.1' }, () =>
      resolve(started),
    )
  })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const capabilities = defineTask({
    name: 'get_adcp_capabilities',
    description: 'Describes the seller agent',
    input: z.object({}).strict(),
    output: z.looseObject({}),
    access: 'public',
    handler: () => ({
      adcp: { major_versions: [3] },
      supported_protocols: ['media_buy'],
      webhook_signing: { supported: true, profile: 'adcp/webhook-signing/v1', algorithms: ['ed25519'] },
      identity: {
        brand_json_url: `${keyServer.url}/.well-known/brand.json`,
        ...(keyOrigin ? { key_origins: { webhook_signing: keyOrigin } } : {}),
      },
    }),
  })
  const server2 = createAgentServer({ tasks: [capabilities], name: 'seller', version: '1.0.0', url })
  handler = (request) => server2.fetch(request)
  return { url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

beforeAll(async () => {
  const key = await generateSigningKey({ alg: 'ed25519', kid: 'seller-capabilities-key' })
  privateJwk = key.privateJwk
  jwks = key.jwks
  // Development settings: the agent, brand.json and the JWKS are on 127.0.0.1 over http.
  receiver = await startTestReceiver({ ALLOW_INSECURE_KEY_URLS: '1' })
  keyServer = await localServer((request, response) => {
    if (request.url === '/.well-known/jwks.json') return json(response, 200, jwks)
    if (request.url === '/.well-known/brand.json') {
      const jwks_uri = `${keyServer.url}/.well-known/jwks.json`
      return json(response, 200, {
        agents: [
          { type: 'sales', url: `${agent.url}/mcp`, jwks_uri },
          { type: 'sales', url: `${agent.url}/a2a`, jwks_uri },
        ],
      })
    }
    json(response, 404, {})
  })
  agent = await startAgent()
  keyOrigin = keyServer.url
})

afterAll(async () => {
  await receiver?.close()
  await agent?.close()
  await keyServer?.close()
})

const register = async (body: Record<string, unknown>) => {
  const answer = await api(receiver, '/api/registrations', { body })
  expect(answer.status, JSON.stringify(answer.body)).toBe(201)
  return answer.body as { id: string; url: string }
}

describe('key_discovery: capabilities', () => {
  it.each(['mcp', 'a2a'] as const)(
    'finds the keys through the agent (%s), brand.json and the JWKS, and verifies a delivery',
    async (protocol) => {
      const created = await register({
        auth: 'rfc9421',
        agent_url: `${agent.url}/${protocol}`,
        key_discovery: 'capabilities',
        ...(protocol === 'a2a' ? { agent_protocol: 'a2a' } : {}),
      })
      const shown = await api(receiver, `/api/registrations/${created.id}`)
      expect(shown.body).toMatchObject({
        agent_url: `${agent.url}/${protocol}`,
        key_discovery: 'capabilities',
        agent_protocol: protocol,
      })
      const payload = envelope()
      expect((await sendSigned(created.url, payload, privateJwk)).status).toBe(200)
      const events = await eventually(async () => {
        const listed = (await api(receiver, `/api/events?registration=${created.id}`)).body.events
        return listed.length > 0 ? listed : undefined
      })
      expect(events).toMatchObject([{ idempotency_key: payload.idempotency_key, publications: 1 }])
    },
  )

  it('refuses deliveries when identity.key_origins names another origin than the JWKS host', async () => {
    keyOrigin = 'https://keys.elsewhere.example'
    try {
      // A fresh agent URL (a fresh registration and resolver): the capabilities are read anew.
      const created = await register({
        auth: 'rfc9421',
        agent_url: `${agent.url}/mcp`,
        key_discovery: 'capabilities',
        label: 'mismatch',
      })
      const answer = await sendSigned(created.url, envelope(), privateJwk)
      expect(answer.status).toBe(401)
      expect(answer.body).toMatchObject({ error: { code: 'webhook_signature_key_unknown' } })
    } finally {
      keyOrigin = keyServer.url
    }
  })

  it('answers 503 (the seller retries) while the agent cannot be reached', async () => {
    const gone = await startAgent()
    await gone.close()
    const created = await register({
      auth: 'rfc9421',
      agent_url: `${gone.url}/mcp`,
      key_discovery: 'capabilities',
    })
    const answer = await sendSigned(created.url, envelope(), privateJwk)
    expect(answer.status).toBe(503)
  })

  it.each([
    [
      'key_discovery without agent_url',
      { auth: 'rfc9421', jwks_uri: 'http://127.0.0.1:1/j', key_discovery: 'capabilities' },
      'key_discovery',
    ],
    [
      'agent_protocol without capabilities',
      { auth: 'rfc9421', agent_url: 'http://127.0.0.1:1/mcp', agent_protocol: 'a2a' },
      'agent_protocol',
    ],
    [
      'brand_json_url with capabilities',
      {
        auth: 'rfc9421',
        agent_url: 'http://127.0.0.1:1/mcp',
        brand_json_url: 'http://127.0.0.1:1/b',
        key_discovery: 'capabilities',
      },
      'brand_json_url',
    ],
    [
      'an unknown discovery',
      { auth: 'rfc9421', agent_url: 'http://127.0.0.1:1/mcp', key_discovery: 'dns' },
      'key_discovery',
    ],
  ])('refuses %s', async (_name, body, field) => {
    const answer = await api(receiver, '/api/registrations', { body })
    expect(answer.status).toBe(400)
    expect(JSON.stringify(answer.body)).toContain(field)
  })
})
