/**
 * Agent Probing: what a live agent says about itself, read over MCP or A2A (see probe.ts) — its name, tools and
 * type, its creative formats, products and publisher portfolio. Each probe is one bounded session: the whole
 * probe has a deadline, each exchange its own, each response a size cap.
 */
import type { AgentCredentialSource } from './contract.js'
import { openAgent, ProbeError, withDeadline, type AgentProtocol, type AgentSession } from './probe.js'

export interface AgentProber {
  discover(url: string): Promise<DiscoveredAgent>
  formats(url: string): Promise<unknown[]>
  products(url: string): Promise<unknown[]>
  publishers(url: string): Promise<unknown[]>
}

export interface DiscoveredAgent {
  name: string
  description?: string
  protocols: AgentProtocol[]
  type: string
  tools_count: number
  tools: Array<{ name: string; description?: string }>
  stats: { format_count?: number; product_count?: number; publisher_count?: number }
}

export interface ProberOptions {
  readonly fetch: typeof fetch
  /** Whole probe, ms. */
  readonly deadlineMs: number
  readonly credentials?: AgentCredentialSource
}

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])

/** The agent type its declared protocols make it (the registry's `AgentType` vocabulary). */
export function agentTypeOf(
  capabilities: Record<string, unknown> | undefined,
  tools: readonly string[],
): string {
  const protocols = asArray(capabilities?.supported_protocols).map(String)
  if (protocols.includes('media_buy') || tools.includes('get_products')) return 'sales'
  if (protocols.includes('creative') || tools.includes('build_creative')) return 'creative'
  if (protocols.includes('signals') || tools.includes('get_signals')) return 'signals'
  if (protocols.includes('governance')) return 'governance'
  if (protocols.includes('brand')) return 'brand'
  return 'unknown'
}

/** A brief every seller can answer (get_products needs `buying_mode`; `brief` mode needs a brief). */
const PRODUCTS_REQUEST = { buying_mode: 'brief', brief: 'All available advertising products' }

async function readFormats(agent: AgentSession, capabilities?: Record<string, unknown>): Promise<unknown[]> {
  const creative = capabilities?.creative as { supported_formats?: unknown } | undefined
  if (Array.isArray(creative?.supported_formats)) return creative.supported_formats
  if (!agent.tools.some((tool) => tool.name === 'list_creative_formats')) {
    throw new ProbeError(
      'protocol',
      'the agent declares no creative.supported_formats and has no list_creative_formats',
    )
  }
  return asArray((await agent.call('list_creative_formats', {})).formats)
}

async function readPublishers(
  agent: AgentSession,
  capabilities?: Record<string, unknown>,
): Promise<unknown[]> {
  if (agent.tools.some((tool) => tool.name === 'list_authorized_properties')) {
    const answer = await agent.call('list_authorized_properties', {})
    return asArray(answer.properties ?? answer.publisher_domains)
  }
  const portfolio = (capabilities?.media_buy as { portfolio?: { publisher_domains?: unknown } } | undefined)
    ?.portfolio
  if (Array.isArray(portfolio?.publisher_domains)) {
    return portfolio.publisher_domains.map((domain) => ({ publisher_domain: domain }))
  }
  if (agent.tools.some((tool) => tool.name === 'get_products')) {
    // The publishers of the products it sells (each product's publisher_properties selectors), merged by domain.
    const byDomain = new Map<
      string,
      { publisher_domain: string; selectors: unknown[]; product_ids: string[] }
    >()
    for (const product of await readProducts(agent)) {
      const { product_id: productId, publisher_properties: selectors } = (product ?? {}) as {
        product_id?: unknown
        publisher_properties?: unknown
      }
      for (const selector of asArray(selectors)) {
        const domain = (selector as { publisher_domain?: unknown }).publisher_domain
        if (typeof domain !== 'string') continue
        let entry = byDomain.get(domain)
        if (!entry)
          byDomain.set(domain, (entry = { publisher_domain: domain, selectors: [], product_ids: [] }))
        entry.selectors.push(selector)
        if (typeof productId === 'string' && !entry.product_ids.includes(productId))
          entry.product_ids.push(productId)
      }
    }
    return [...byDomain.values()]
  }
  throw new ProbeError(
    'protocol',
    'the agent has no list_authorized_properties, declares no media_buy.portfolio and sells no products',
  )
}

async function readProducts(agent: AgentSession): Promise<unknown[]> {
  if (!agent.tools.some((tool) => tool.name === 'get_products')) {
    throw new ProbeError('protocol', 'the agent has no get_products task')
  }
  return asArray((await agent.call('get_products', PRODUCTS_REQUEST)).products)
}

async function capabilitiesOf(agent: AgentSession): Promise<Record<string, unknown> | undefined> {
  if (!agent.tools.some((tool) => tool.name === 'get_adcp_capabilities')) return undefined
  return agent.call('get_adcp_capabilities', {}).catch(() => undefined)
}

/** The prober over an SSRF-safe fetch. */
export function createAgentProber(options: ProberOptions): AgentProber {
  const session = async <T>(
    url: string,
    what: string,
    work: (agent: AgentSession) => Promise<T>,
    protocol?: AgentProtocol,
  ): Promise<T> =>
    withDeadline(options.deadlineMs, `${what} of ${url}`, async () => {
      const credential = await options.credentials?.credentialFor(url)
      const agent = await openAgent(url, {
        fetch: options.fetch,
        ...(credential ? { credential } : {}),
        ...(protocol ? { protocol } : {}),
      })
      try {
        return await work(agent)
      } finally {
        await agent.close().catch(() => {})
      }
    })

  return {
    async discover(url) {
      return session(url, 'discovery', async (agent) => {
        const capabilities = await capabilitiesOf(agent)
        const names = agent.tools.map((tool) => tool.name)
        const stats: DiscoveredAgent['stats'] = {}
        const count = async (key: keyof DiscoveredAgent['stats'], read: () => Promise<unknown[]>) => {
          try {
            stats[key] = (await read()).length
          } catch {
            // the agent does not offer this list: no count
          }
        }
        await count('format_count', () => readFormats(agent, capabilities))
        if (names.includes('get_products')) await count('product_count', () => readProducts(agent))
        await count('publisher_count', () => readPublishers(agent, capabilities))
        const protocols: AgentProtocol[] = [agent.protocol]
        // The same base may serve the other transport too (a URL that does not name one).
        const other: AgentProtocol = agent.protocol === 'mcp' ? 'a2a' : 'mcp'
        if (!/\/(mcp|a2a)\/?$|agent(-card)?\.json$/.test(url)) {
          try {
            await session(url, 'discovery', async () => undefined, other)
            protocols.push(other)
          } catch {
            // one transport only
          }
        }
        return {
          name: agent.name,
          ...(agent.description ? { description: agent.description } : {}),
          protocols,
          type: agentTypeOf(capabilities, names),
          tools_count: agent.tools.length,
          tools: agent.tools.map((tool) => ({ ...tool })),
          stats,
        }
      })
    },
    formats: (url) =>
      session(url, 'formats', async (agent) => readFormats(agent, await capabilitiesOf(agent))),
    products: (url) => session(url, 'products', readProducts),
    publishers: (url) =>
      session(url, 'publishers', async (agent) => readPublishers(agent, await capabilitiesOf(agent))),
  }
}
