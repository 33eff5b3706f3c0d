import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { getAgentCapabilities } from './capabilities-client.js'
import { defineTask } from './define-task.js'
import { AgentError } from './errors.js'
import { listFormats, startAgent, tokens, BUYER_TOKEN, type RunningAgent } from './testing/support.js'

const described = {
  adcp: { major_versions: [3] },
  supported_protocols: ['media_buy'],
  webhook_signing: { supported: true, profile: 'adcp/webhook-signing/v1', algorithms: ['ed25519'] },
  identity: { brand_json_url: 'https://seller.example/.well-known/brand.json' },
}

const capabilities = defineTask({
  name: 'get_adcp_capabilities',
  description: 'Describes the agent',
  input: z.object({}).strict(),
  output: z.looseObject({}),
  access: 'public',
  handler: () => described,
})
const failing = defineTask({
  ...capabilities,
  handler: () => {
    throw new AgentError('SERVICE_UNAVAILABLE', 'capabilities are being rebuilt', { retryAfter: 5 })
  },
})

let agent: RunningAgent
let broken: RunningAgent
beforeAll(async () => {
  agent = await startAgent({ tasks: [capabilities, listFormats], auth: { tokens } })
  broken = await startAgent({ tasks: [failing] })
})
afterAll(async () => {
  await agent.close()
  await broken.close()
})

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as AgentError,
  )

describe('getAgentCapabilities', () => {
  it('reads the capabilities over MCP with the official client', async () => {
    expect(await getAgentCapabilities(`${agent.origin}/mcp`)).toMatchObject(described)
  })

  it('reads the capabilities over A2A (SendMessage with the AdCP extension)', async () => {
    expect(await getAgentCapabilities(`${agent.origin}/a2a`, { protocol: 'a2a' })).toMatchObject(described)
  })

  it('sends the given headers and goes through the given fetch', async () => {
    const seen: string[] = []
    const counting: typeof fetch = (input, init) => {
      seen.push(new Headers(init?.headers).get('authorization') ?? '')
      return fetch(input, init)
    }
    const headers = { authorization: `Bearer ${BUYER_TOKEN}` }
    await getAgentCapabilities(`${agent.origin}/mcp`, { fetch: counting, headers })
    await getAgentCapabilities(`${agent.origin}/a2a`, { protocol: 'a2a', fetch: counting, headers })
    expect(seen.length).toBeGreaterThanOrEqual(2)
    expect(new Set(seen)).toEqual(new Set([`Bearer ${BUYER_TOKEN}`]))
  })

  it("answers the agent's own AdCP error code", async () => {
    for (const [url, protocol] of [
      [`${broken.origin}/mcp`, 'mcp'],
      [`${broken.origin}/a2a`, 'a2a'],
    ] as const) {
      const error = await rejection(getAgentCapabilities(url, { protocol }))
      expect(error).toBeInstanceOf(AgentError)
      expect(error?.code).toBe('SERVICE_UNAVAILABLE')
      expect(error?.message).toMatch(/being rebuilt/)
    }
  })

  it('answers SERVICE_UNAVAILABLE when the agent cannot be reached, is not an agent, or is aborted', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const notAnAgent = createServer((_request, response) => response.writeHead(404).end('no'))
    await new Promise<void>((resolve) => notAnAgent.listen(0, '127.0.0.1', resolve))
    const other = `http://127.0.0.1:${(notAnAgent.address() as AddressInfo).port}`
    try {
      for (const [url, protocol] of [
        [`http://127.0.0.1:${port}/mcp`, 'mcp'],
        [`http://127.0.0.1:${port}/a2a`, 'a2a'],
        [`${other}/mcp`, 'mcp'],
        [`${other}/a2a`, 'a2a'],
      ] as const) {
        const error = await rejection(getAgentCapabilities(url, { protocol }))
        expect(error?.code, url).toBe('SERVICE_UNAVAILABLE')
      }
      const aborted = await rejection(
        getAgentCapabilities(`${agent.origin}/mcp`, { signal: AbortSignal.abort() }),
      )
      expect(aborted?.code).toBe('SERVICE_UNAVAILABLE')
    } finally {
      await new Promise<void>((resolve) => notAnAgent.close(() => resolve()))
    }
  })

  it('refuses a URL that is not absolute http(s)', async () => {
    expect((await rejection(getAgentCapabilities('ftp://agent.example/mcp')))?.code).toBe('INVALID_REQUEST')
  })
})
