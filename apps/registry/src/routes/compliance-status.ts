/**
 * Agent Compliance, status side: compliance detail and verification, SVG badges (plain and version-pinned)
 * with embed code, lifecycle and opt-out, monitoring settings (pause, interval, requeue, the outbound request
 * log), refresh, and the agent credentials (bearer/basic token, OAuth client credentials and their live test).
 * Everything is derived from the stored outcomes and settings (`compliance/status.ts`); an agent with no
 * outcome is `unknown` and unverified, as the document answers for an untested agent.
 */
import { createHash } from 'node:crypto'
import { Hono, type Context } from 'hono'
import { embedSnippets, renderBadgeSvg } from '../compliance/badge.js'
import {
  CredentialsUnavailableError,
  testClientCredentials,
  type AgentCredentialStore,
  type ClientCredentialsConfig,
} from '../compliance/credentials.js'
import { launchLogged, MONITOR_USER_AGENT } from '../compliance/monitoring.js'
import {
  BADGE_ROLES,
  CATALOG_ADCP_VERSION,
  isBadgeRole,
  type BadgeRole,
} from '../compliance/status-catalog.js'
import { iso, type AgentSettings } from '../compliance/status-store.js'
import {
  compareRelease,
  releaseOf,
  storyboardState,
  type ComplianceStatusService,
  type Derived,
} from '../compliance/status.js'
import { authorizeAgentControl, authorizeAgentLister } from '../auth/authorize.js'
import type { RegistryDeps } from '../deps.js'
import { hasApiAccess } from '../domain/membership.js'
import {
  agentUrlParam,
  HttpError,
  intParam,
  MAX_BODY_BYTES,
  readBody,
  reply,
  requirePrincipal,
} from './http.js'

const BASE = '/api/registry/agents/:encodedUrl'
/** Refresh may run once a minute per agent (the document's per-agent limit). */
const REFRESH_DEBOUNCE_MS = 60_000
const PROBE_TIMEOUT_MS = 10_000

const TIER_LABELS: Record<string, string> = {
  explorer: 'Explorer',
  professional: 'Professional',
  builder: 'Builder',
  member: 'Member',
  leader: 'Leader',
}

const TRIGGER_SOURCE: Record<string, 'heartbeat' | 'owner_test' | 'manual'> = {
  heartbeat: 'heartbeat',
  refresh: 'owner_test',
  manual: 'manual',
  step: 'manual',
  compare: 'manual',
}

function serviceOf(deps: RegistryDeps): ComplianceStatusService {
  const service = deps.compliance?.outcomes
  if (!service) throw new HttpError(500, 'compliance_unavailable', 'compliance status is not configured')
  return service
}

function credentialsOf(deps: RegistryDeps): AgentCredentialStore {
  const store = deps.compliance?.credentials
  if (!store?.available) {
    throw new HttpError(
      500,
      'credentials_unavailable',
      'agent credentials cannot be stored: the registry has no AGENT_CREDENTIALS_KEY',
    )
  }
  return store
}

const agentOf = (c: Context) => agentUrlParam(c.req.param('encodedUrl'), 'encodedUrl')

/** A body the document declares optional: `{}` when none was sent. */
async function optionalBody<T>(c: Context, operationId: string): Promise<Partial<T>> {
  const length = c.req.header('content-length')
  if (!c.req.header('content-type') && (length === undefined || length === '0')) return {}
  return readBody<Partial<T>>(c, operationId)
}

const encoded = (agentUrl: string) => encodeURIComponent(agentUrl)

function urls(deps: RegistryDeps, c: Context, agentUrl: string) {
  const base = `${deps.publicUrl(c)}/api/registry/agents/${encoded(agentUrl)}`
  return {
    registry: `${base}/compliance`,
    badge: (role: BadgeRole, version?: string) =>
      version ? `${base}/badge/${role}/${version}.svg` : `${base}/badge/${role}.svg`,
  }
}

function metadata(settings: AgentSettings, derived: Derived) {
  return {
    agent_url: settings.agentUrl,
    lifecycle_stage: settings.lifecycleStage,
    compliance_opt_out: settings.optOut,
    badge_requalification_required: derived.requalificationRequired,
    monitoring_paused: settings.paused,
    check_interval_hours: settings.intervalHours,
    monitoring_paused_at: settings.pausedAt,
    created_at: settings.createdAt,
    updated_at: settings.updatedAt,
  }
}

const monitoringSettings = (settings: AgentSettings) => ({
  monitoring_paused: settings.paused,
  check_interval_hours: settings.intervalHours,
  monitoring_paused_at: settings.pausedAt,
})

function invalidRole(role: string): HttpError {
  return new HttpError(400, 'invalid_role', `${role} is not a badge role`, {
    code: 'invalid_role',
    valid_roles: [...BADGE_ROLES],
  })
}

function versionParam(value: string): string {
  if (!/^[0-9]{1,3}\.[0-9]{1,3}$/.test(value)) {
    throw new HttpError(400, 'invalid_version', 'version must be an AdCP release as MAJOR.MINOR (e.g. 3.1)', {
      details: { parameter: 'version' },
    })
  }
  return value
}

/** Sends a badge SVG with a strong ETag that must be revalidated before reuse (opt-out shows at once). */
function svgResponse(c: Context, svg: string): Response {
  const etag = `"${createHash('sha256').update(svg).digest('base64url').slice(0, 27)}"`
  const headers = {
    'content-type': 'image/svg+xml; charset=utf-8',
    'cache-control': 'no-cache',
    etag,
  }
  const match = c.req.header('if-none-match')
  if (match && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
    return new Response(null, { status: 304, headers })
  }
  return new Response(svg, { status: 200, headers })
}

/** The probe of `refreshAgent`: an MCP `initialize` (any HTTP answer means the agent is up). */
async function probe(
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

type CredentialField =
  | 'oauth_client_credentials'
  | 'token_endpoint'
  | 'client_id'
  | 'client_secret'
  | 'scope'
  | 'resource'
  | 'audience'
  | 'auth_method'

/** A `CredentialSaveValidationError`. */
const credentialError = (code: string, field: CredentialField, message: string) =>
  new HttpError(400, code, message, { code, field })

const LOOPBACK_HOSTS = /^(localhost|127\.[0-9.]+|\[::1\])$/i
const ENV_REFERENCE = /^\$ENV:[A-Za-z_][A-Za-z0-9_]*$/
/** The longest whole configuration, characters of its JSON. */
const MAX_CREDENTIALS_JSON = 16 * 1024

/** Validates a client-credentials body field by field (the document's codes and fields). */
function clientCredentialsOf(body: unknown, allowPrivate: boolean): ClientCredentialsConfig {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw credentialError('invalid_blob_shape', 'oauth_client_credentials', 'the body must be a JSON object')
  }
  const fields = body as Record<string, unknown>
  const text = (field: CredentialField, max: number, required: boolean): string | undefined => {
    const value = fields[field]
    if (value === undefined || value === null) {
      if (required) throw credentialError('missing_field', field, `${field} is required`)
      return undefined
    }
    if (typeof value !== 'string')
      throw credentialError('invalid_field_type', field, `${field} must be a string`)
    if (required && value.trim() === '') throw credentialError('missing_field', field, `${field} is empty`)
    if (value.length > max) {
      throw credentialError('field_too_long', field, `${field} is longer than ${max} characters`)
    }
    return value
  }
  const tokenEndpoint = text('token_endpoint', 2048, true)!
  const clientId = text('client_id', 2048, true)!
  const clientSecret = text('client_secret', 8192, true)!
  const scope = text('scope', 1024, false)
  const audience = text('audience', 2048, false)
  let endpoint: URL | undefined
  try {
    endpoint = new URL(tokenEndpoint)
  } catch {
    endpoint = undefined
  }
  const local = endpoint !== undefined && allowPrivate && LOOPBACK_HOSTS.test(endpoint.hostname)
  if (
    !endpoint ||
    !(endpoint.protocol === 'https:' || (endpoint.protocol === 'http:' && local)) ||
    endpoint.username ||
    endpoint.password ||
    endpoint.hash
  ) {
    throw credentialError(
      'invalid_url',
      'token_endpoint',
      'token_endpoint must be an https URL without credentials or fragment (http only for localhost in development)',
    )
  }
  for (const field of ['client_id', 'client_secret'] as const) {
    const value = field === 'client_id' ? clientId : clientSecret
    if (value.startsWith('$ENV:') && !ENV_REFERENCE.test(value)) {
      throw credentialError(
        'invalid_env_reference',
        field,
        `${field} must be $ENV:NAME with NAME letters, digits and _`,
      )
    }
  }
  let resource: string | string[] | undefined
  const rawResource = fields.resource
  if (rawResource !== undefined && rawResource !== null) {
    const list = Array.isArray(rawResource) ? rawResource : [rawResource]
    if (Array.isArray(rawResource) && list.length === 0) {
      throw credentialError('array_too_few', 'resource', 'resource must list at least one URI')
    }
    if (list.length > 8) throw credentialError('array_too_many', 'resource', 'resource lists at most 8 URIs')
    for (const item of list) {
      if (typeof item !== 'string')
        throw credentialError('invalid_field_type', 'resource', 'resource must be URI strings')
      if (item.length > 2048)
        throw credentialError('field_too_long', 'resource', 'a resource is longer than 2048 characters')
      if (!URL.canParse(item))
        throw credentialError('invalid_url', 'resource', `resource ${item} is not an absolute URI`)
    }
    resource = rawResource as string | string[]
  }
  const authMethod = fields.auth_method
  if (authMethod !== undefined && authMethod !== null && authMethod !== 'basic' && authMethod !== 'body') {
    throw credentialError('invalid_auth_method_value', 'auth_method', 'auth_method must be basic or body')
  }
  if (fields.organization_id !== undefined && typeof fields.organization_id !== 'string') {
    throw credentialError(
      'invalid_field_type',
      'oauth_client_credentials',
      'organization_id must be a string',
    )
  }
  const config: ClientCredentialsConfig = {
    token_endpoint: tokenEndpoint,
    client_id: clientId,
    client_secret: clientSecret,
    ...(scope !== undefined ? { scope } : {}),
    ...(resource !== undefined ? { resource } : {}),
    ...(audience !== undefined ? { audience } : {}),
    ...(authMethod ? { auth_method: authMethod as 'basic' | 'body' } : {}),
  }
  if (JSON.stringify(config).length > MAX_CREDENTIALS_JSON) {
    throw credentialError('aggregate_too_long', 'oauth_client_credentials', 'the configuration is too long')
  }
  return config
}

export function complianceStatusRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()
  const lastRefresh = new Map<string, number>()

  const verificationOf = async (c: Context, agentUrl: string) => {
    const { derived } = await serviceOf(deps).read(agentUrl)
    const link = urls(deps, c, agentUrl)
    return {
      link,
      derived,
      badges: derived.badges.map((badge) => ({ ...badge, badge_url: link.badge(badge.role) })),
    }
  }

  app.get(`${BASE}/compliance`, async (c) => {
    const agentUrl = agentOf(c)
    const service = serviceOf(deps)
    const { settings, derived } = await service.read(agentUrl)
    const link = urls(deps, c, agentUrl)
    const badges = derived.badges.map((badge) => ({ ...badge, badge_url: link.badge(badge.role) }))
    if (settings.optOut) {
      return reply(c, deps, 'getAgentCompliance', {
        agent_url: agentUrl,
        status: 'opted_out',
        lifecycle_stage: settings.lifecycleStage,
        compliance_opt_out: true,
        badge_requalification_required: derived.requalificationRequired,
        verified: false,
        verified_badges: [],
      })
    }
    let owner = false
    if (c.req.header('authorization')) {
      const principal = await deps.auth.authenticate(c.req.raw)
      const orgId = principal?.orgId ?? (principal?.kind === 'org' ? principal.id : undefined)
      owner =
        orgId !== undefined && (await deps.repository.members.getMemberAgent(orgId, agentUrl)) !== undefined
    }
    const storyboards = derived.latest.map((row) => {
      const info = service.catalog.info(row.storyboard_id)
      return {
        storyboard_id: row.storyboard_id,
        requested_compliance_target: releaseOf(row.adcp_version),
        adcp_version: row.adcp_version,
        title: info.title,
        category: info.category,
        track: info.track,
        status: storyboardState(row.status),
        steps_passed: row.steps_passed,
        steps_total: row.steps_passed + row.steps_failed + row.steps_skipped,
        failure_count: row.steps_failed,
        skipped_count: row.steps_skipped,
        first_failed_step_id: null,
        first_failed_step_title: null,
        first_failed_step_task: null,
        first_failure_message: null,
        first_failure_validations: [],
        last_tested_at: row.finished_at,
        last_passed_at: derived.lastPassed.get(row.storyboard_id) ?? null,
      }
    })
    const tracks: Record<string, string> = {}
    const trackDetails = new Map<string, { total: number; passed: number; ms: number }>()
    for (const row of derived.latest) {
      const track = service.catalog.info(row.storyboard_id).track
      if (!track) continue
      const detail = trackDetails.get(track) ?? { total: 0, passed: 0, ms: 0 }
      detail.total += 1
      if (row.status === 'passed') detail.passed += 1
      detail.ms += Math.max(0, Date.parse(row.finished_at) - Date.parse(row.started_at))
      trackDetails.set(track, detail)
    }
    const trackState = (detail: { total: number; passed: number }) =>
      detail.passed === detail.total ? 'passing' : detail.passed === 0 ? 'failing' : 'partial'
    for (const [track, detail] of trackDetails) tracks[track] = trackState(detail)
    const specialismStatus: Record<string, 'passing' | 'failing' | 'untested' | 'unknown'> = {}
    for (const row of derived.latest) {
      const specialism = service.catalog.info(row.storyboard_id).specialism
      if (!specialism) continue
      const state = row.status === 'passed' ? 'passing' : 'failing'
      if (specialismStatus[specialism] !== 'failing') specialismStatus[specialism] = state
    }
    const passing = derived.latest.filter((row) => row.status === 'passed').length
    const newest = derived.newest
    const latestOf = (statuses: readonly string[]) =>
      derived.latest
        .filter((row) => statuses.includes(row.status))
        .reduce<string | null>(
          (at, row) => (at === null || row.finished_at > at ? row.finished_at : at),
          null,
        )
    const lastPassedAt = [...derived.lastPassed.values()].reduce<string | null>(
      (at, value) => (at === null || value > at ? value : at),
      null,
    )
    const statusChangedAt = settings.statusChangedAt
    const streakDays =
      derived.status === 'passing' && statusChangedAt
        ? Math.max(0, Math.floor((deps.now() - Date.parse(statusChangedAt)) / 86_400_000))
        : 0
    return reply(c, deps, 'getAgentCompliance', {
      agent_url: agentUrl,
      requested_compliance_target: newest ? releaseOf(newest.adcp_version) : null,
      adcp_version: newest?.adcp_version ?? null,
      status: derived.status,
      lifecycle_stage: settings.lifecycleStage,
      compliance_opt_out: false,
      badge_requalification_required: derived.requalificationRequired,
      tracks,
      track_details: [...trackDetails].map(([track, detail]) => ({
        track,
        status: trackState(detail),
        scenario_count: detail.total,
        passed_count: detail.passed,
        duration_ms: detail.ms,
      })),
      streak_days: streakDays,
      last_checked_at: settings.lastCheckedAt ?? newest?.finished_at ?? null,
      last_passed_at: lastPassedAt,
      last_failed_at: latestOf(['failed', 'error', 'partial']),
      headline:
        derived.latest.length === 0 ? null : `${passing} of ${derived.latest.length} storyboards passing`,
      status_changed_at: statusChangedAt,
      storyboards_passing: passing,
      storyboards_total: derived.latest.length,
      check_interval_hours: settings.intervalHours,
      declared_specialisms: Object.keys(specialismStatus).sort(),
      specialism_status: specialismStatus,
      storyboard_statuses: storyboards,
      notices: [],
      observations: [],
      membership_tier: owner ? deps.memberTier : null,
      membership_tier_label: owner ? (TIER_LABELS[deps.memberTier] ?? deps.memberTier) : null,
      subscription_status: owner ? 'active' : null,
      is_api_access_tier: owner && hasApiAccess(deps.memberTier),
      verdict_source: owner && newest ? (TRIGGER_SOURCE[newest.run_trigger] ?? 'manual') : null,
      verified: badges.length > 0,
      verified_badges: badges,
    })
  })

  app.get(`${BASE}/verification`, async (c) => {
    const agentUrl = agentOf(c)
    const { link, badges } = await verificationOf(c, agentUrl)
    return reply(c, deps, 'getAgentVerification', {
      agent_url: agentUrl,
      verified: badges.length > 0,
      badges,
      registry_url: link.registry,
    })
  })

  /** The badge a role holds: the highest release, or the one pinned. */
  const badgeState = async (c: Context, agentUrl: string, role: BadgeRole, pinned?: string) => {
    const { link, badges } = await verificationOf(c, agentUrl)
    const held = badges
      .filter((badge) => badge.role === role && (pinned === undefined || badge.adcp_version === pinned))
      .sort((a, b) => compareRelease(b.adcp_version, a.adcp_version))[0]
    return { link, held }
  }

  const embed = async (c: Context, operationId: string, role: BadgeRole, pinned?: string) => {
    const agentUrl = agentOf(c)
    const { link, held } = await badgeState(c, agentUrl, role, pinned)
    const svgUrl = link.badge(role, pinned)
    const version = pinned ?? held?.adcp_version
    return reply(c, deps, operationId, {
      agent_url: agentUrl,
      role,
      verified: held !== undefined,
      ...(version !== undefined ? { adcp_version: version } : {}),
      badge_svg_url: svgUrl,
      registry_url: link.registry,
      ...embedSnippets({
        svgUrl,
        registryUrl: link.registry,
        role,
        verified: held !== undefined,
        ...(pinned ? { version: pinned } : {}),
      }),
    })
  }

  const svg = async (c: Context, role: BadgeRole, pinned?: string) => {
    const agentUrl = agentOf(c)
    const { held } = await badgeState(c, agentUrl, role, pinned)
    return svgResponse(
      c,
      renderBadgeSvg({
        role,
        verified: held !== undefined,
        ...(pinned ? { version: pinned } : held ? { version: held.adcp_version } : {}),
      }),
    )
  }

  // `/badge/{role}.svg`
  app.get(`${BASE}/badge/:file`, async (c, next) => {
    const file = c.req.param('file')
    if (!file.endsWith('.svg')) return next()
    agentOf(c)
    const role = file.slice(0, -'.svg'.length)
    if (!isBadgeRole(role)) throw invalidRole(role)
    return svg(c, role)
  })

  // `/badge/{role}/embed` and `/badge/{role}/{version}.svg`
  app.get(`${BASE}/badge/:role/:file`, async (c, next) => {
    const file = c.req.param('file')
    const operation = file === 'embed' ? 'getAgentBadgeEmbed' : file.endsWith('.svg') ? 'svg' : undefined
    if (!operation) return next()
    agentOf(c)
    const role = c.req.param('role')
    if (!isBadgeRole(role)) throw invalidRole(role)
    if (operation === 'getAgentBadgeEmbed') return embed(c, operation, role)
    return svg(c, role, versionParam(file.slice(0, -'.svg'.length)))
  })

  app.get(`${BASE}/badge/:role/:version/embed`, async (c) => {
    agentOf(c)
    const role = c.req.param('role')
    if (!isBadgeRole(role)) throw invalidRole(role)
    return embed(c, 'getAgentBadgeVersionedEmbed', role, versionParam(c.req.param('version')))
  })

  /** A settings change by the agent's owner; answers with `answer(settings, derived)`. */
  const ownerUpdate =
    <Body extends object>(
      operationId: string,
      change: (body: Body, current: AgentSettings, now: number) => Partial<AgentSettings>,
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
    `${BASE}/lifecycle`,
    ownerUpdate<{ lifecycle_stage: AgentSettings['lifecycleStage'] }>(
      'updateAgentLifecycle',
      (body) => ({ lifecycleStage: body.lifecycle_stage }),
      metadata,
    ),
  )

  app.put(
    `${BASE}/compliance/opt-out`,
    ownerUpdate<{ opt_out: boolean }>(
      'updateAgentComplianceOptOut',
      (body, current, now) =>
        body.opt_out === current.optOut
          ? {}
          : // Opting out revokes every badge; opting back in needs a passing full-suite run started after now.
            { optOut: body.opt_out, requalifySince: iso(now) },
      metadata,
    ),
  )

  app.get(`${BASE}/monitoring/settings`, async (c) => {
    await requirePrincipal(c, deps)
    const agentUrl = agentOf(c)
    await authorizeAgentControl(c, deps, agentUrl)
    const settings = await serviceOf(deps).store.settings(agentUrl, deps.now())
    return reply(c, deps, 'getAgentMonitoringSettings', monitoringSettings(settings))
  })

  app.put(
    `${BASE}/monitoring/pause`,
    ownerUpdate<{ paused: boolean }>(
      'updateAgentMonitoringPause',
      (body, current, now) =>
        body.paused === current.paused
          ? {}
          : { paused: body.paused, pausedAt: body.paused ? iso(now) : null },
      monitoringSettings,
    ),
  )

  app.put(
    `${BASE}/monitoring/interval`,
    ownerUpdate<{ interval_hours: number }>(
      'updateAgentMonitoringInterval',
      (body, current) => ({
        intervalHours: body.interval_hours,
        // The next heartbeat moves with the interval; an agent never checked (or requeued) stays due now.
        nextCheckAt: current.lastCheckedAt
          ? iso(Date.parse(current.lastCheckedAt) + body.interval_hours * 3_600_000)
          : current.nextCheckAt,
      }),
      monitoringSettings,
    ),
  )

  app.post(`${BASE}/monitoring/requeue`, async (c) => {
    await requirePrincipal(c, deps)
    const agentUrl = agentOf(c)
    await authorizeAgentControl(c, deps, agentUrl)
    const service = serviceOf(deps)
    await service.store.updateSettings(agentUrl, deps.now(), () => ({
      lastCheckedAt: null,
      nextCheckAt: null,
    }))
    service.scheduleChanged()
    return reply(c, deps, 'requeueAgentForHeartbeat', { requeued: true })
  })

  app.get(`${BASE}/monitoring/requests`, async (c) => {
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
    return reply(c, deps, 'getAgentMonitoringRequests', {
      agent_url: agentUrl,
      requests: rows,
      count: rows.length,
      total,
    })
  })

  app.post(`${BASE}/refresh`, async (c) => {
    await requirePrincipal(c, deps)
    const agentUrl = agentOf(c)
    const body = await optionalBody<{ organization_id: string }>(c, 'refreshAgent')
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
    const key = settings.agentUrl.toLowerCase()
    const now = deps.now()
    const previous = lastRefresh.get(key)
    if (previous !== undefined && now - previous < REFRESH_DEBOUNCE_MS) {
      const retryAfter = Math.max(1, Math.ceil((REFRESH_DEBOUNCE_MS - (now - previous)) / 1000))
      throw new HttpError(
        429,
        'rate_limited',
        `this agent was refreshed less than a minute ago; retry in ${retryAfter} s`,
        { retry_after: retryAfter },
        { 'Retry-After': String(retryAfter) },
      )
    }
    lastRefresh.set(key, now)
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
    let compliance: Record<string, unknown>
    if (!launcher) {
      compliance = { ran: false, error: 'no compliance runner is configured on this registry' }
    } else if (probed.oauthRequired && !hasAuth) {
      compliance = {
        ran: false,
        error:
          'auth_required: the agent asks for authorization; save credentials with PUT …/connect or …/oauth-client-credentials',
      }
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
    return reply(c, deps, 'refreshAgent', {
      online: true,
      tools_count: null,
      response_time_ms: probed.ms,
      inferred_type: member?.type ?? 'unknown',
      type_promoted: false,
      oauth_required: probed.oauthRequired,
      checked_at: iso(now),
      compliance,
    })
  })

  app.get(`${BASE}/auth-status`, async (c) => {
    const principal = await requirePrincipal(c, deps)
    const agentUrl = agentOf(c)
    const requested = c.req.query('org')
    const own = principal.orgId ?? (principal.kind === 'org' ? principal.id : undefined)
    if (requested !== undefined && requested !== '' && requested !== own) {
      throw new HttpError(
        400,
        'invalid_parameter',
        `org ${requested} is not an organization of this credential`,
        {
          details: { parameter: 'org' },
        },
      )
    }
    const store = deps.compliance?.credentials
    const status = own && store ? await store.status(own, agentUrl) : undefined
    const hasAuth = status !== undefined && (status.hasToken || status.hasClientCredentials)
    return reply(c, deps, 'getAgentAuthStatus', {
      has_auth: hasAuth,
      agent_context_id: status?.agentContextId ?? null,
      auth_type: hasAuth ? status!.authType : null,
      has_oauth_token: false,
      has_valid_oauth: false,
      oauth_token_expires_at: null,
      has_oauth_client_credentials: status?.hasClientCredentials ?? false,
    })
  })

  app.put(`${BASE}/connect`, async (c) => {
    await requirePrincipal(c, deps)
    const agentUrl = agentOf(c)
    const body = await readBody<{
      auth_token?: string
      auth_type?: 'bearer' | 'basic'
      organization_id?: string
    }>(c, 'connectAgent')
    if (body.auth_token !== undefined && body.auth_token.trim() === '') {
      throw new HttpError(400, 'invalid_parameter', 'auth_token is empty', {
        details: { field: 'auth_token' },
      })
    }
    const orgId = await authorizeAgentLister(c, deps, agentUrl, body.organization_id)
    const store = credentialsOf(deps)
    const now = deps.now()
    const saved = await sealing(() =>
      body.auth_token === undefined
        ? store.ensureContext(orgId, agentUrl, now)
        : store.saveToken(orgId, agentUrl, { type: body.auth_type ?? 'bearer', value: body.auth_token }, now),
    )
    const status = await store.status(orgId, agentUrl)
    return reply(c, deps, 'connectAgent', {
      connected: true,
      has_auth: status !== undefined && (status.hasToken || status.hasClientCredentials),
      agent_context_id: saved.agentContextId,
    })
  })

  app.put(`${BASE}/oauth-client-credentials`, async (c) => {
    await requirePrincipal(c, deps)
    let agentUrl: string
    try {
      agentUrl = agentOf(c)
    } catch (error) {
      if (error instanceof HttpError) {
        throw new HttpError(400, error.code, error.message, {
          code: 'invalid_url',
          field: 'oauth_client_credentials',
        })
      }
      throw error
    }
    const type = c.req.header('content-type') ?? ''
    if (!/^application\/(.+\+)?json\b/i.test(type)) {
      throw new HttpError(415, 'unsupported_media_type', 'send the body as application/json')
    }
    const raw = await c.req.arrayBuffer()
    if (raw.byteLength > MAX_BODY_BYTES) {
      throw new HttpError(413, 'payload_too_large', `the body exceeds ${MAX_BODY_BYTES} bytes`)
    }
    let body: unknown
    try {
      body = JSON.parse(new TextDecoder().decode(raw))
    } catch {
      throw credentialError('invalid_blob_shape', 'oauth_client_credentials', 'the body is not valid JSON')
    }
    const service = serviceOf(deps)
    const config = clientCredentialsOf(body, service.allowPrivate)
    const organizationId = (body as { organization_id?: string }).organization_id
    const orgId = await authorizeAgentLister(c, deps, agentUrl, organizationId)
    const store = credentialsOf(deps)
    const saved = await sealing(() => store.saveClientCredentials(orgId, agentUrl, config, deps.now()))
    return reply(c, deps, 'saveAgentOAuthClientCredentials', {
      connected: true,
      has_auth: true,
      agent_context_id: saved.agentContextId,
      auth_type: 'oauth_client_credentials',
    })
  })

  app.post(`${BASE}/oauth-client-credentials/test`, async (c) => {
    await requirePrincipal(c, deps)
    const agentUrl = agentOf(c)
    const body = await optionalBody<{ organization_id: string }>(c, 'testAgentOAuthClientCredentials')
    const orgId = await authorizeAgentLister(c, deps, agentUrl, body.organization_id)
    const store = credentialsOf(deps)
    const config = await sealing(() => store.clientCredentials(orgId, agentUrl))
    if (!config) {
      throw new HttpError(
        404,
        'credentials_not_found',
        'no OAuth client credentials are saved for this agent',
      )
    }
    const service = serviceOf(deps)
    const at = deps.now()
    const result = await testClientCredentials(config, service.fetch, () => performance.now())
    await service.store.addRequest({
      agent_url: agentUrl,
      request_type: 'oauth_token_test',
      user_agent: MONITOR_USER_AGENT,
      response_time_ms: result.latency_ms,
      success: result.ok,
      error_message: result.ok ? null : result.error.message,
      created_at: iso(at),
    })
    return reply(c, deps, 'testAgentOAuthClientCredentials', result)
  })

  return app
}

/** Runs a sealing or opening step, answering a missing or wrong key as 500 `credentials_unavailable`. */
async function sealing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof CredentialsUnavailableError) {
      throw new HttpError(500, 'credentials_unavailable', error.message)
    }
    throw error
  }
}
