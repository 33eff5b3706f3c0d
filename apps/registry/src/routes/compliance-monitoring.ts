/**
 * Agent Compliance, monitoring: the log of the registry's outbound requests to an agent
 * (`getAgentMonitoringRequests`) and the owner's refresh (`refreshAgent`: probe the agent now, log it, and start
 * a compliance run when the rules of `domain/refresh-policy.ts` allow).
 */
import { Hono } from 'hono'
import { probe } from '../compliance/monitor-probe.js'
import { launchLogged, MONITOR_USER_AGENT } from '../compliance/monitoring.js'
import { CATALOG_ADCP_VERSION } from '../compliance/status-catalog.js'
import { iso } from '../compliance/status-store.js'
import { releaseOf } from '../compliance/status.js'
import { authorizeAgentControl } from '../auth/authorize.js'
import type { RegistryDeps } from '../deps.js'
import { createRefreshThrottle, refreshRunDecision } from '../domain/refresh-policy.js'
import { AGENT_BASE, agentOf, optionalBody, serviceOf } from './compliance-context.js'
import type { RequestBody, ResponseBody } from './contract-types.js'
import { HttpError, intParam, reply, requirePrincipal } from './http.js'

type Agent = '/api/registry/agents/{encodedUrl}'
type Refresh = ResponseBody<`${Agent}/refresh`, 'post'>

const RUN_NOT_STARTED: Record<'no_runner' | 'auth_required', string> = {
  no_runner: 'no compliance runner is configured on this registry',
  auth_required:
    'auth_required: the agent asks for authorization; save credentials with PUT …/connect or …/oauth-client-credentials',
}

/**
 * The monitoring log and refresh routes.
 *
 * @example
 * app.route('/', complianceMonitoringRoutes(deps))
 */
export function complianceMonitoringRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()
  const throttle = createRefreshThrottle()

  app.get(`${AGENT_BASE}/monitoring/requests`, async (c) => {
    await requirePrincipal(c, deps)
    const agentUrl = agentOf(c)
    const limit = intParam(c.req.query('limit'), 'limit', 50, 1, 200)
    const since = c.req.query('since')
    if (since !== undefined && (!/^\d{4}-\d{2}-\d{2}/.test(since) || Number.isNaN(Date.parse(since)))) {
      throw new HttpError(400, 'invalid_parameter', 'since must be an ISO 8601 timestamp', {
        details: { parameter: 'since' },
      })
    }
    await authorizeAgentControl(c, deps, agentUrl)
    const { rows, total } = await serviceOf(deps).store.requests(agentUrl, {
      limit,
      ...(since !== undefined ? { since: new Date(Date.parse(since)).toISOString() } : {}),
    })
    const body: ResponseBody<`${Agent}/monitoring/requests`, 'get'> = {
      agent_url: agentUrl,
      requests: rows,
      count: rows.length,
      total,
    }
    return reply(c, deps, 'getAgentMonitoringRequests', body)
  })

  app.post(`${AGENT_BASE}/refresh`, async (c) => {
    await requirePrincipal(c, deps)
    const agentUrl = agentOf(c)
    const body = await optionalBody<RequestBody<`${Agent}/refresh`, 'post'>>(c, 'refreshAgent')
    const orgId = await authorizeAgentControl(c, deps, agentUrl, body.organization_id)
    const service = serviceOf(deps)
    const settings = await service.store.settings(agentUrl, deps.now())
    if (settings.paused) {
      throw new HttpError(
        409,
        'monitoring_paused',
        'monitoring is paused for this agent; resume it to refresh',
      )
    }
    const now = deps.now()
    const retryAfter = throttle.take(settings.agentUrl, now)
    if (retryAfter !== undefined) {
      throw new HttpError(
        429,
        'rate_limited',
        `this agent was refreshed less than a minute ago; retry in ${retryAfter} s`,
        { retry_after: retryAfter },
        { 'Retry-After': String(retryAfter) },
      )
    }
    const probed = await probe(service, agentUrl)
    await service.store.addRequest({
      agent_url: agentUrl,
      request_type: 'health_probe',
      user_agent: MONITOR_USER_AGENT,
      response_time_ms: probed.ms,
      success: probed.online,
      error_message: probed.error ?? (probed.online ? null : `the agent answered ${probed.status}`),
      created_at: iso(now),
    })
    if (!probed.online) {
      throw new HttpError(
        502,
        'probe_failed',
        probed.error
          ? `the agent could not be reached: ${probed.error}`
          : `the agent answered ${probed.status}`,
      )
    }
    const member = await deps.repository.members.getMemberAgent(orgId, agentUrl)
    const credentials = deps.compliance?.credentials
    const hasAuth = credentials?.available ? (await credentials.status(orgId, agentUrl)) !== undefined : false
    const launcher = deps.compliance?.launcher
    const decision = refreshRunDecision({
      hasRunner: launcher !== undefined,
      oauthRequired: probed.oauthRequired,
      hasAuth,
    })
    let compliance: Refresh['compliance']
    if (decision !== 'run' || !launcher) {
      compliance = { ran: false, error: RUN_NOT_STARTED[decision === 'run' ? 'no_runner' : decision] }
    } else {
      const { runIds, error } = await launchLogged(service, launcher, agentUrl, 'refresh', deps.now)
      const runId = runIds[0]
      compliance =
        error !== undefined || runId === undefined
          ? { ran: false, error: error ?? 'the runner started no run' }
          : {
              ran: true,
              run_id: runId,
              test_session_id: runId,
              requested_compliance_target: releaseOf(CATALOG_ADCP_VERSION),
              adcp_version: CATALOG_ADCP_VERSION,
              badge_eligible: service.badgesAllowed,
              badge_eligible_adcp_versions: service.badgesAllowed ? [releaseOf(CATALOG_ADCP_VERSION)] : [],
            }
    }
    const answer: Refresh = {
      online: true,
      tools_count: null,
      response_time_ms: probed.ms,
      inferred_type: member?.type ?? 'unknown',
      type_promoted: false,
      oauth_required: probed.oauthRequired,
      checked_at: iso(now),
      compliance,
    }
    return reply(c, deps, 'refreshAgent', answer)
  })

  return app
}
