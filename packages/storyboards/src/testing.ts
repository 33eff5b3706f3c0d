/**
 * `@adwire/storyboards/testing`: a deliberately broken tiny AdCP agent for negative tests of the runner and of
 * tools built on it: the official MCP server SDK
 * (stateless streamable HTTP) on 127.0.0.1, port 0, answering get_adcp_capabilities, list_creatives,
 * create_media_buy (whose webhooks it always posts unsigned, with no RFC 9421 signature) and, on request,
 * get_products, with the faults a test switches on.
 */
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'

/** What the agent gets wrong. */
export type Fault =
  /** Answers every call whatever the credentials (HTTP 200 where 401/403 is due). */
  | 'wrong_status'
  /** get_adcp_capabilities without `supported_protocols`. */
  | 'missing_field'
  /** get_adcp_capabilities with `adcp.major_versions` a string (schema-invalid). */
  | 'schema_invalid'
  /** Drops the request's `context` from responses. */
  | 'no_context_echo'
  /** Never answers list_creatives. */
  | 'hang'
  /** Answers list_creatives with a 2 MiB body. */
  | 'huge'

/** Options of {@link startBrokenAgent}. */
export interface BrokenAgentOptions {
  /**
   * Offer `comply_test_controller`: `record` answers every scenario with success and records it, `unknown_scenario`
   * answers `UNKNOWN_SCENARIO`.
   */
  controller?: 'record' | 'unknown_scenario'
  /** Offer `get_products` with one fixed-price product (what the runner's completed create_media_buy buys). */
  products?: boolean
}

/** A running broken agent. */
export interface BrokenAgent {
  url: string
  /** The `comply_test_controller` calls it received (scenario, params and the account asserted). */
  controllerCalls: { scenario: string; params: unknown; account?: unknown }[]
  close(): Promise<void>
}

/** The bearer it accepts: the acme-outdoor test kit's `auth.api_key`. */
export const TOKEN = 'demo-acme-outdoor-v1'

const TOOLS = ['get_adcp_capabilities', 'list_creatives', 'create_media_buy']

const PRODUCT = {
  product_id: 'broken_display',
  name: 'Broken display',
  description: 'The one product of the broken agent',
  delivery_type: 'non_guaranteed',
  pricing_options: [
    { pricing_option_id: 'cpm_fixed', pricing_model: 'cpm', currency: 'USD', fixed_price: 10 },
  ],
}

function answer(
  task: string,
  args: Record<string, unknown>,
  faults: ReadonlySet<Fault>,
): Record<string, unknown> {
  const context = faults.has('no_context_echo') || args.context === undefined ? {} : { context: args.context }
  if (task === 'get_adcp_capabilities') {
    return {
      status: 'completed',
      adcp: { major_versions: faults.has('schema_invalid') ? '3' : [3], idempotency: { supported: false } },
      ...(faults.has('missing_field') ? {} : { supported_protocols: ['media_buy'] }),
      ...context,
    }
  }
  if (task === 'list_creatives') {
    const padding = faults.has('huge') ? { ext: { padding: 'x'.repeat(2 * 1024 * 1024) } } : {}
    return {
      status: 'completed',
      ...padding,
      query_summary: { total_matching: 0, returned: 0 },
      pagination: { has_more: false },
      creatives: [],
      ...context,
    }
  }
  if (task === 'get_products') return { status: 'completed', products: [PRODUCT], ...context }
  return { media_buy_id: `mb_${crypto.randomUUID()}`, status: 'pending_creatives', packages: [], ...context }
}

async function emitWebhook(args: Record<string, unknown>): Promise<void> {
  const config = args.push_notification_config as { url?: string; operation_id?: string } | undefined
  if (!config?.url) return
  const body = JSON.stringify({
    idempotency_key: `whk_${crypto.randomUUID()}`,
    operation_id: config.operation_id,
    task_id: crypto.randomUUID(),
    task_type: 'create_media_buy',
    status: 'completed',
    timestamp: new Date().toISOString(),
    result: {},
  })
  // At-least-once: retried on 5xx with the same idempotency key, up to four attempts.
  for (let attempt = 0; attempt < 4; attempt++) {
    const status = await fetch(config.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
      .then((response) => response.status)
      .catch(() => 0)
    if (status < 500) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const readJson = (request: IncomingMessage): Promise<unknown> =>
  new Promise((resolve) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')))
      } catch {
        resolve(undefined)
      }
    })
  })

/**
 * Starts the broken agent with the given faults.
 * @example const agent = await startBrokenAgent(['no_context_echo'])
 */
export async function startBrokenAgent(
  faults: readonly Fault[] = [],
  options: BrokenAgentOptions = {},
): Promise<BrokenAgent> {
  const controllerCalls: BrokenAgent['controllerCalls'] = []
  const tools = [
    ...TOOLS,
    ...(options.controller ? ['comply_test_controller'] : []),
    ...(options.products ? ['get_products'] : []),
  ]
  const active = new Set(faults)
  const replays = new Map<string, Record<string, unknown>>()
  const http = createServer((request, response) => {
    void (async () => {
      if (!request.url?.startsWith('/mcp')) {
        response.writeHead(404).end()
        return
      }
      if (!active.has('wrong_status') && request.headers.authorization !== `Bearer ${TOKEN}`) {
        response.writeHead(401, { 'www-authenticate': 'Bearer realm="broken-agent"' }).end()
        return
      }
      const server = new Server({ name: 'broken-agent', version: '0.0.0' }, { capabilities: { tools: {} } })
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: tools.map((name) => ({ name, inputSchema: { type: 'object' as const } })),
      }))
      server.setRequestHandler(CallToolRequestSchema, async (call) => {
        const args = (call.params.arguments ?? {}) as Record<string, unknown>
        if (call.params.name === 'list_creatives' && active.has('hang')) await new Promise(() => {})
        if (call.params.name === 'comply_test_controller') {
          controllerCalls.push({
            scenario: String(args.scenario),
            params: args.params,
            ...(args.account !== undefined ? { account: args.account } : {}),
          })
          const body =
            options.controller === 'unknown_scenario'
              ? {
                  success: false,
                  error: 'UNKNOWN_SCENARIO',
                  error_detail: `${String(args.scenario)} is not implemented`,
                }
              : { success: true }
          return { structuredContent: body, content: [{ type: 'text' as const, text: JSON.stringify(body) }] }
        }
        const key = call.params.name === 'create_media_buy' ? String(args.idempotency_key) : undefined
        const replay = key ? replays.get(key) : undefined
        if (replay) {
          const replayed = {
            ...replay,
            ...(args.context === undefined || active.has('no_context_echo') ? {} : { context: args.context }),
          }
          return {
            structuredContent: replayed,
            content: [{ type: 'text' as const, text: JSON.stringify(replayed) }],
          }
        }
        if (key) setTimeout(() => void emitWebhook(args), 10)
        const body = answer(call.params.name, args, active)
        if (key) replays.set(key, { ...body, replayed: true })
        return { structuredContent: body, content: [{ type: 'text' as const, text: JSON.stringify(body) }] }
      })
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      })
      response.on('close', () => void transport.close())
      await server.connect(transport)
      await transport.handleRequest(
        request,
        response,
        request.method === 'POST' ? await readJson(request) : undefined,
      )
    })().catch(() => response.writeHead(500).end())
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', () => resolve()))
  const { port } = http.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    controllerCalls,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections()
        http.close(() => resolve())
      }),
  }
}
