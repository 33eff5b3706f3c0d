/**
 * The liveness probe of an owner's refresh (registry.yaml `refreshAgent`): the official MCP client's
 * `initialize` to the agent (`@adwire/agent-client`'s `probeAgent`), timed, over the registry's fetch.
 */
import { probeAgent, type ProbeResult } from '@adwire/agent-client'
import { MONITOR_USER_AGENT } from './monitoring.js'
import type { ComplianceStatusService } from './status.js'

const PROBE_TIMEOUT_MS = 10_000

/**
 * The probe of `refreshAgent` (any HTTP answer below 500 means the agent is up).
 *
 * @example
 * const probed = await probe(service, 'https://agent.example/mcp')
 * if (!probed.online) console.log(probed.error ?? probed.status)
 */
export function probe(service: ComplianceStatusService, agentUrl: string): Promise<ProbeResult> {
  return probeAgent(agentUrl, {
    fetch: service.fetch,
    timeoutMs: PROBE_TIMEOUT_MS,
    userAgent: MONITOR_USER_AGENT,
  })
}
