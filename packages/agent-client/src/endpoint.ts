/**
 * Where an agent is spoken to, from the URL a user gives: its base URL (`https://seller.example`) or its
 * endpoint URL (`https://seller.example/mcp`, `…/a2a`, `…/.well-known/agent-card.json`), as the official
 * `adcp` CLI accepts both.
 */

/** The transports of an AdCP agent. */
export type Protocol = 'mcp' | 'a2a'

/** Where {@link agentEndpoint} says an agent is. */
export interface AgentEndpoint {
  /** The agent's base URL (no trailing slash, no transport suffix). */
  readonly base: string
  /** The transport the URL names by its suffix, when it names one. */
  readonly protocol?: Protocol
  /** The MCP streamable HTTP endpoint: the URL itself when it ends in `/mcp`, else `<base>/mcp`. */
  readonly mcp: string
}

const SUFFIXES: ReadonlyArray<[RegExp, Protocol]> = [
  [/\/mcp$/, 'mcp'],
  [/\/a2a$/, 'a2a'],
  [/\/\.well-known\/agent(-card)?\.json$/, 'a2a'],
]

/**
 * The base URL, the transport a URL names, and the MCP endpoint of an agent URL.
 *
 * @example
 * agentEndpoint('http://127.0.0.1:4200/mcp') // { base: 'http://127.0.0.1:4200', protocol: 'mcp', mcp: 'http://127.0.0.1:4200/mcp' }
 * agentEndpoint('http://127.0.0.1:4200').mcp // 'http://127.0.0.1:4200/mcp'
 */
export function agentEndpoint(url: string): AgentEndpoint {
  const trimmed = url.trim().replace(/\/+$/, '')
  for (const [suffix, protocol] of SUFFIXES) {
    if (suffix.test(trimmed)) {
      const base = trimmed.replace(suffix, '')
      return { base, protocol, mcp: protocol === 'mcp' ? trimmed : `${base}/mcp` }
    }
  }
  return { base: trimmed, mcp: `${trimmed}/mcp` }
}
