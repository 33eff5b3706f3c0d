/** The operator's brand.json of an agent host: the agent's base URL and its two endpoints, all on one JWKS. */

/** Who the agent is, in brand.json. */
export interface BrandIdentity {
  /** The brand.json agent type (`creative`, `sales`, …). */
  readonly type: string
  /** The base entry's id; the endpoints get `{id}_mcp` and `{id}_a2a`. */
  readonly id: string
  /** The base entry's description. */
  readonly description: string
  /** How the endpoint descriptions name the agent (`the sales agent` → `the sales agent over MCP …`). */
  readonly name: string
}

/**
 * The brand.json document: `agents[]` for `publicUrl`, `{publicUrl}/mcp` and `{publicUrl}/a2a`, each with
 * `jwks_uri` `{publicUrl}/.well-known/jwks.json`.
 *
 * @example
 * brandJson('https://agent.example', { type: 'sales', id: 'adwire_sales_agent', description: 'adwire sales agent', name: 'the sales agent' }, new Date().toISOString())
 */
export function brandJson(
  publicUrl: string,
  brand: BrandIdentity,
  lastUpdated: string,
): Record<string, unknown> {
  const jwksUri = `${publicUrl}/.well-known/jwks.json`
  const entry = (url: string, id: string, description: string) => ({
    type: brand.type,
    url,
    id,
    description,
    jwks_uri: jwksUri,
  })
  return {
    version: '1.0',
    agents: [
      entry(publicUrl, brand.id, brand.description),
      entry(`${publicUrl}/mcp`, `${brand.id}_mcp`, `${brand.name} over MCP (streamable HTTP)`),
      entry(`${publicUrl}/a2a`, `${brand.id}_a2a`, `${brand.name} over A2A (JSON-RPC)`),
    ],
    last_updated: lastUpdated,
  }
}
