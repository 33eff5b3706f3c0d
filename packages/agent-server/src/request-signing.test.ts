/* eslint-disable @typescript-eslint/no-explicit-any -- loose JSON access in assertions */
import {
  generateSigningKey,
  MemoryReplayStore,
  remoteJwksResolver,
  signRequest,
  type GeneratedSigningKey,
} from '@adwire/http-signatures'
import { createSafeFetch } from '@adwire/http-signatures/node'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { a2aSendRequest } from '@adwire/agent-client'
import { defineTask } from './define-task.js'
import { startAgent, tokens, BUYER_TOKEN, type RunningAgent } from './testing/support.js'

/** Answers who the server says signed the call. */
const whoami = (name: string) =>
  defineTask({
    name,
    description: 'Echoes the verified signer',
    input: z.object({}).strict(),
    output: z.object({ signer: z.looseObject({}).nullable() }),
    access: 'public',
    handler: (_input, context) => ({ signer: context.verifiedSigner ? { ...context.verifiedSigner } : null }),
  })

const capability = { required_for: ['sign_me'], supported_for: ['whoami', 'sign_me'] }

let buyer: GeneratedSigningKey
let stranger: GeneratedSigningKey
let agent: RunningAgent
let keysDown: RunningAgent

beforeAll(async () => {
  buyer = await generateSigningKey({ alg: 'ed25519', kid: 'buyer-request-key' })
  stranger = await generateSigningKey({ alg: 'es256', kid: 'stranger-key' })
  const tasks = [whoami('whoami'), whoami('sign_me')]
  agent = await startAgent({
    tasks,
    auth: { tokens },
    requestSigning: { keys: buyer.jwks, replayStore: new MemoryReplayStore(), capability },
  })
  // Keys behind a JWKS URL nothing answers: the one retryable failure.
  keysDown = await startAgent({
    tasks,
    requestSigning: {
      keys: remoteJwksResolver({
        url: 'http://127.0.0.1:9/jwks.json',
        fetch: createSafeFetch({ allowHttp: true, allowLoopback: true }),
      }),
      replayStore: new MemoryReplayStore(),
      capability,
    },
  })
})
afterAll(async () => {
  await agent.close()
  await keysDown.close()
})

/** A fetch that signs every POST with `key` (the AdCP 3.1 request profile), as a buyer agent does. */
const signingFetch =
  (key: GeneratedSigningKey): typeof fetch =>
  async (input, init) => {
    if ((init?.method ?? 'GET') !== 'POST') return fetch(input, init)
    const url = input instanceof Request ? input.url : String(input)
    const headers = Object.fromEntries(new Headers(init?.headers))
    const body = typeof init?.body === 'string' ? init.body : ''
    const signed = await signRequest(
      { method: 'POST', url, headers, body },
      { key: key.privateJwk, profile: '3.1' },
    )
    return fetch(url, { ...init, headers: signed.headers })
  }

async function mcpCall(name: string, fetchImpl: typeof fetch = fetch, token?: string) {
  const client = new Client({ name: 'buyer', version: '1' })
  const transport = new StreamableHTTPClientTransport(new URL(`${agent.origin}/mcp`), {
    fetch: fetchImpl,
    ...(token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}),
  })
  await client.connect(transport)
  try {
    return await client.callTool({ name, arguments: {} })
  } finally {
    await client.close()
  }
}

/** One raw A2A SendMessage (1.0) for `skill`, signed with `key` when given. */
async function a2aCall(origin: string, skill: string, key?: GeneratedSigningKey) {
  const invocation = a2aSendRequest({ skill, input: {}, id: 7 })
  const body = JSON.stringify(invocation.body)
  const url = `${origin}/a2a`
  const headers = key
    ? (
        await signRequest(
          { method: 'POST', url, headers: invocation.headers, body },
          { key: key.privateJwk, profile: '3.1' },
        )
      ).headers
    : invocation.headers
  const response = await fetch(url, { method: 'POST', headers, body })
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, any>,
  }
}

describe('request signing', () => {
  it('names the signer of a signed MCP call, and of none for an unsigned supported one', async () => {
    const signed = await mcpCall('whoami', signingFetch(buyer))
    expect(signed.structuredContent).toMatchObject({ signer: { keyid: 'buyer-request-key' } })
    expect((signed.structuredContent as any).signer.verified_at).toEqual(expect.any(Number))
    expect((await mcpCall('whoami')).structuredContent).toEqual({ adcp_version: '3.1', signer: null })
  })

  it('names the signer of a signed A2A call', async () => {
    const answer = await a2aCall(agent.origin, 'sign_me', buyer)
    expect(answer.status).toBe(200)
    expect(answer.body.result.task.artifacts[0].parts[0].data).toMatchObject({
      signer: { keyid: 'buyer-request-key' },
    })
  })

  it('refuses an unsigned call to a required_for operation with 401 and the code, unless a bearer credential holds', async () => {
    const answer = await a2aCall(agent.origin, 'sign_me')
    expect(answer.status).toBe(401)
    expect(answer.headers.get('www-authenticate')).toBe('Signature error="request_signature_required"')
    expect(answer.body).toMatchObject({
      jsonrpc: '2.0',
      id: 7,
      error: { data: { adcp_error: { code: 'request_signature_required' } } },
    })
    await expect(mcpCall('sign_me')).rejects.toThrow(/request_signature_required/)
    // Composition: a valid bearer credential stands in for the signature.
    expect((await mcpCall('sign_me', fetch, BUYER_TOKEN)).structuredContent).toEqual({
      adcp_version: '3.1',
      signer: null,
    })
    await expect(mcpCall('sign_me', fetch, 'not-a-valid-token-0123456789')).rejects.toThrow(
      /request_signature_required/,
    )
  })

  it('refuses a signature by an unknown key and a replayed one, even on operations that need none', async () => {
    const unknown = await a2aCall(agent.origin, 'whoami', stranger)
    expect(unknown.status).toBe(401)
    expect(unknown.headers.get('www-authenticate')).toBe('Signature error="request_signature_key_unknown"')
    const body = JSON.stringify(a2aSendRequest({ skill: 'whoami', input: {} }).body)
    const url = `${agent.origin}/a2a`
    const headers = { 'content-type': 'application/json', 'a2a-version': '1.0' }
    const signed = await signRequest(
      { method: 'POST', url, headers, body },
      { key: buyer.privateJwk, profile: '3.1' },
    )
    expect((await fetch(url, { method: 'POST', headers: signed.headers, body })).status).toBe(200)
    const replay = await fetch(url, { method: 'POST', headers: signed.headers, body })
    expect(replay.status).toBe(401)
    expect(replay.headers.get('www-authenticate')).toBe('Signature error="request_signature_replayed"')
  })

  it('answers 503 with Retry-After when the keys cannot be fetched (the retryable failure)', async () => {
    const answer = await a2aCall(keysDown.origin, 'whoami', buyer)
    expect(answer.status).toBe(503)
    expect(answer.headers.get('retry-after')).toBe('5')
    expect(answer.body.error.data.adcp_error).toMatchObject({
      code: 'request_signature_jwks_unavailable',
      recovery: 'transient',
    })
  })
})
