/**
 * The liveness probe of an owner's refresh (registry.yaml `refreshAgent`): one MCP `initialize` request to the
 * agent, timed. Kept apart so the registry's agent calls can move to a shared agent client in one place.
 */
import { MONITOR_USER_AGENT } from './monitoring.js'
import type { ComplianceStatusService } from './status.js'

const PROBE_TIMEOUT_MS = 10_000

/**
 * The probe of `refreshAgent`: an MCP `initialize` (any HTTP answer means the agent is up).
 *
 * @example
 * const probed = await probe(service, 'https://agent.example/mcp')
 * if (!probed.online) console.log(probed.error ?? probed.status)
 */
export async function probe(
  service: ComplianceStatusService,
  agentUrl: string,
): Promise<{ online: boolean; oauthRequired: boolean; status?: number; ms: number; error?: string }> {
  const started = performance.now()
  try {
    const response = await service.fetch(agentUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'user-agent': MONITOR_USER_AGENT,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: MONITOR_USER_AGENT, version: '1' },
        },
      }),
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    })
    await response.body?.cancel()
    const ms = Math.round(performance.now() - started)
    return {
      online: response.status < 500,
      oauthRequired: response.status === 401,
      status: response.status,
      ms,
    }
  } catch (error) {
    return {
      online: false,
      oauthRequired: false,
      ms: Math.round(performance.now() - started),
      error: error instanceof Error ? error.message : String(error),
    }
  }
}
