import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  AgentClientError,
  agentEndpoint,
  connectAgent,
  getAgentCapabilities,
  probeAgent,
} from '../src/index.js'
import { startMcpAgent, type McpAgent } from './mcp-agent.js'

const described = { adcp: { major_versions: [3] }, supported_protocols: ['media_buy'] }
let agent: McpAgent
let huge: McpAgent
beforeAll(async () => {
  agent = await startMcpAgent(described)
  huge = await startMcpAgent(described, 64 * 1024)
})
afterAll(async () => {
  await agent.close()
  await huge.close()
})

describe('agentEndpoint', () => {
  it('takes a base URL or an endpoint URL', () => {
    expect(agentEndpoint('https://seller.example/')).toEqual({
      base: 'https://seller.example',
      mcp: 'https://seller.example/mcp',
    })
    expect(agentEndpoint('https://seller.example/adcp/mcp')).toEqual({
      base: 'https://seller.example/adcp',
      protocol: 'mcp',
      mcp: 'https://seller.example/adcp/mcp',
    })
    expect(agentEndpoint('https://seller.example/a2a/')).toMatchObject({
      base: 'https://seller.example',
      protocol: 'a2a',
    })
    expect(agentEndpoint('https://seller.example/.well-known/agent-card.json')).toMatchObject({
      base: 'https://seller.example',
      protocol: 'a2a',
    })
  })
})

describe('connectAgent over MCP', () => {
  it('connects from the base URL and from the /mcp endpoint URL alike (never POST /mcp/mcp)', async () => {
    for (const url of [agent.origin, `${agent.origin}/mcp`, `${agent.origin}/mcp/`]) {
      agent.paths.length = 0
      const connection = await connectAgent(url)
      expect((await connection.describe()).tasks.map((task) => task.name)).toContain('get_adcp_capabilities')
      const result = await connection.call('get_adcp_capabilities', {})
      expect(result).toMatchObject({ protocol: 'mcp', body: described, transportError: false })
      await connection.close()
      expect(
        agent.paths.every((path) => path === '/mcp'),
        url,
      ).toBe(true)
    }
  })

  it('unwraps an AdCP error and goes through the given fetch with the given headers', async () => {
    const seen: string[] = []
    const counting: typeof fetch = (input, init) => {
      seen.push(new Headers(init?.headers).get('authorization') ?? '')
      return fetch(input, init)
    }
    const connection = await connectAgent(agent.origin, {
      fetch: counting,
      headers: { authorization: 'Bearer t' },
    })
    const result = await connection.call('fail', {})
    expect(result).toMatchObject({ transportError: true, body: { adcp_error: { code: 'RATE_LIMITED' } } })
    await connection.close()
    expect(seen.length).toBeGreaterThan(0)
    expect(new Set(seen)).toEqual(new Set(['Bearer t']))
  })

  it('caps the response size: a larger answer is a failed call, not a hang', async () => {
    const connection = await connectAgent(huge.origin, { maxResponseBytes: 16 * 1024 })
    const result = await connection.call('get_adcp_capabilities', {})
    expect(result.error).toMatch(/exceeds the 16384-byte limit/)
    await connection.close()
  })
})

describe('getAgentCapabilities', () => {
  it('reads the capabilities and answers the codes of AgentClientError', async () => {
    expect(await getAgentCapabilities(`${agent.origin}/mcp`)).toMatchObject(described)
    const invalid = await getAgentCapabilities('ftp://agent.example/mcp').catch((error: unknown) => error)
    expect(AgentClientError.is(invalid) && invalid.code).toBe('INVALID_REQUEST')
    const aborted = await getAgentCapabilities(agent.origin, { signal: AbortSignal.abort() }).catch(
      (error: unknown) => error,
    )
    expect(AgentClientError.is(aborted) && aborted.code).toBe('SERVICE_UNAVAILABLE')
  })
})

describe('probeAgent', () => {
  it('answers online with the status and the time taken, or offline with the reason', async () => {
    expect(await probeAgent(`${agent.origin}/mcp`)).toMatchObject({ online: true, status: 200 })
    await probeAgent(agent.origin, { userAgent: 'adwire-monitor' })
    const closed = await startMcpAgent(described)
    await closed.close()
    const offline = await probeAgent(closed.origin, { timeoutMs: 2_000 })
    expect(offline.online).toBe(false)
    expect(offline.error).toBeTruthy()
    expect(offline.ms).toBeGreaterThanOrEqual(0)
  })
})
