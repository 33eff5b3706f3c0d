/**
 * Agent Compliance, the owner's settings: lifecycle stage and compliance opt-out (`updateAgentLifecycle`,
 * `updateAgentComplianceOptOut`, answered with the agent's compliance metadata) and monitoring (read, pause,
 * interval, requeue). The changes themselves are `domain/agent-settings.ts`; every change reschedules the
 * heartbeats.
 */
import { Hono, type Context } from 'hono'
import type { AgentSettings, SettingsPatch } from '../compliance/status-store.js'
import type { Derived } from '../compliance/status.js'
import { authorizeAgentControl } from '../auth/authorize.js'
import type { RegistryDeps } from '../deps.js'
import {
  intervalChange,
  lifecycleChange,
  optOutChange,
  pauseChange,
  requeueChange,
} from '../domain/agent-settings.js'
import { AGENT_BASE, agentOf, serviceOf } from './compliance-context.js'
import type { RequestBody, ResponseBody } from './contract-types.js'
import { readBody, reply, requirePrincipal } from './http.js'

type Agent = '/api/registry/agents/{encodedUrl}'
type Metadata = ResponseBody<`${Agent}/lifecycle`, 'put'>
type Monitoring = ResponseBody<`${Agent}/monitoring/settings`, 'get'>

/** The agent's compliance metadata (the answer of lifecycle and opt-out changes). */
const metadata = (settings: AgentSettings, derived: Derived): Metadata => ({
  agent_url: settings.agentUrl,
  lifecycle_stage: settings.lifecycleStage,
  compliance_opt_out: settings.optOut,
  badge_requalification_required: derived.requalificationRequired,
  monitoring_paused: settings.paused,
  check_interval_hours: settings.intervalHours,
  monitoring_paused_at: settings.pausedAt,
  created_at: settings.createdAt,
  updated_at: settings.updatedAt,
})

const monitoringSettings = (settings: AgentSettings): Monitoring => ({
  monitoring_paused: settings.paused,
  check_interval_hours: settings.intervalHours,
  monitoring_paused_at: settings.pausedAt,
})

/**
 * The settings routes.
 *
 * @example
 * app.route('/', complianceSettingsRoutes(deps))
 */
export function complianceSettingsRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()

  /** A settings change by the agent's owner; answers with `answer(settings, derived)`. */
  const ownerUpdate =
    <Body extends object>(
      operationId: string,
      change: (body: Body, current: AgentSettings, now: number) => SettingsPatch,
      answer: (settings: AgentSettings, derived: Derived) => unknown,
    ) =>
    async (c: Context) => {
      await requirePrincipal(c, deps)
      const agentUrl = agentOf(c)
      const body = await readBody<Body>(c, operationId)
      await authorizeAgentControl(c, deps, agentUrl)
      const service = serviceOf(deps)
      const now = deps.now()
      await service.store.updateSettings(agentUrl, now, (current) => change(body, current, now))
      service.scheduleChanged()
      const { settings, derived } = await service.read(agentUrl)
      return reply(c, deps, operationId, answer(settings, derived))
    }

  app.put(
    `${AGENT_BASE}/lifecycle`,
    ownerUpdate<RequestBody<`${Agent}/lifecycle`, 'put'>>(
      'updateAgentLifecycle',
      (body) => lifecycleChange(body.lifecycle_stage),
      metadata,
    ),
  )

  app.put(
    `${AGENT_BASE}/compliance/opt-out`,
    ownerUpdate<RequestBody<`${Agent}/compliance/opt-out`, 'put'>>(
      'updateAgentComplianceOptOut',
      (body, current, now) => optOutChange(body.opt_out, current, now),
      metadata,
    ),
  )

  app.get(`${AGENT_BASE}/monitoring/settings`, async (c) => {
    await requirePrincipal(c, deps)
    const agentUrl = agentOf(c)
    await authorizeAgentControl(c, deps, agentUrl)
    const settings = await serviceOf(deps).store.settings(agentUrl, deps.now())
    return reply(c, deps, 'getAgentMonitoringSettings', monitoringSettings(settings))
  })

  app.put(
    `${AGENT_BASE}/monitoring/pause`,
    ownerUpdate<RequestBody<`${Agent}/monitoring/pause`, 'put'>>(
      'updateAgentMonitoringPause',
      (body, current, now) => pauseChange(body.paused, current, now),
      monitoringSettings,
    ),
  )

  app.put(
    `${AGENT_BASE}/monitoring/interval`,
    ownerUpdate<RequestBody<`${Agent}/monitoring/interval`, 'put'>>(
      'updateAgentMonitoringInterval',
      (body, current) => intervalChange(body.interval_hours, current),
      monitoringSettings,
    ),
  )

  app.post(`${AGENT_BASE}/monitoring/requeue`, async (c) => {
    await requirePrincipal(c, deps)
    const agentUrl = agentOf(c)
    await authorizeAgentControl(c, deps, agentUrl)
    const service = serviceOf(deps)
    await service.store.updateSettings(agentUrl, deps.now(), requeueChange)
    service.scheduleChanged()
    const body: ResponseBody<`${Agent}/monitoring/requeue`, 'post'> = { requeued: true }
    return reply(c, deps, 'requeueAgentForHeartbeat', body)
  })

  return app
}
