/**
 * Agent Compliance, the runs half: storyboard runs (whole, one step, compared with the reference agent) of a
 * registered agent by its owner, the run history, per-step diagnostics, per-storyboard status (single and bulk)
 * and the storyboards an agent's declared capabilities make applicable.
 *
 * Runs are jobs (compliance/runs.ts). `POST …/run`, `…/step/{stepId}` and `…/compare` answer the document's 200
 * with the finished result; with `Prefer: respond-async` they answer 202 at once with the run's id and state
 * (a documented addition), the result then read from the history and diagnostics.
 */
import type { Context } from 'hono'
import { Hono } from 'hono'
import type { ComplianceRuns } from '../compliance/runs.js'
import {
  applicableBundles,
  complianceTarget,
  findStoryboard,
  knownSpecialisms,
  storyboardBundle,
  SUPPORTED_TARGETS,
} from '../compliance/runs-catalog.js'
import { openAgent, ProbeError, withDeadline } from '../compliance/probe.js'
import type { StoredRun } from '../compliance/runs-store.js'
import type { AgentCredentialSource } from '../compliance/contract.js'
import { authorizeAgentControl, authorizeAgentLister } from '../auth/authorize.js'
import type { RegistryDeps } from '../deps.js'
import { canonicalAgentUrl, isHttpUrl } from '../domain/names.js'
import { agentUrlParam, HttpError, intParam, readBody, reply, requirePrincipal, uuidParam } from './http.js'

export interface ComplianceRouteOptions {
  readonly runs: ComplianceRuns
  /** The fetch the capability probe goes through (SSRF-safe). */
  readonly fetch: typeof fetch
  readonly credentials?: AgentCredentialSource
  /** compareStoryboard's reference agent; unset: compare answers 500 `reference_agent_unconfigured`. */
  readonly reference?: { readonly url: string; readonly name: string }
  /** How long a synchronous run may hold its request before the answer is the run's state, ms. */
  readonly syncWaitMs: number
  /** The capability probe's deadline, ms. */
  readonly probeDeadlineMs: number
}

/** The ComplianceRun history entry. */
const historyEntry = (run: StoredRun) => ({
  id: run.id,
  requested_compliance_target: run.requested_compliance_target,
  adcp_version: run.adcp_version,
  overall_status: run.overall_status,
  headline: run.headline,
  tracks_passed: run.tracks_passed,
  tracks_failed: run.tracks_failed,
  tracks_skipped: run.tracks_skipped,
  tracks_partial: run.tracks_partial,
  tracks_json: run.tracks ?? [],
  total_duration_ms: run.total_duration_ms,
  triggered_by: run.trigger,
  tested_at: run.finished_at ?? run.started_at ?? run.created_at,
  state: run.state,
  storyboard_ids: run.storyboard_ids,
})

/** The compliance-runs routes. */
export function complianceRunRoutes(deps: RegistryDeps, parts: ComplianceRouteOptions): Hono {
  const app = new Hono()
  const { runs } = parts

  const target = (value: string | undefined): string => {
    const found = complianceTarget(value)
    if (!found) {
      throw new HttpError(
        400,
        'unsupported_compliance_target',
        `compliance_target ${value} is not served here; this registry runs ${SUPPORTED_TARGETS}`,
        { details: { parameter: 'compliance_target' } },
      )
    }
    return found
  }

  /** Members only (`403 { error, members_only }`). */
  const member = async (c: Context): Promise<void> => {
    const principal = await requirePrincipal(c, deps)
    if (!(principal.orgId ?? (principal.kind === 'org' ? principal.id : undefined))) {
      throw new HttpError(403, 'members_only', 'storyboard status is for members of an organization', {
        members_only: true,
      })
    }
  }

  const storyboardParam = (id: string | undefined) => {
    const entry = findStoryboard(id ?? '')
    if (!entry) throw new HttpError(404, 'storyboard_not_found', `no storyboard ${id} in the 3.1.19 bundle`)
    return entry
  }

  const optionalBody = async <T>(c: Context, operationId: string): Promise<T> =>
    c.req.header('content-length') === '0' ||
    (!c.req.header('content-type') && !c.req.header('content-length'))
      ? ({} as T)
      : readBody<T>(c, operationId)

  const wantsAsync = (c: Context) => /\brespond-async\b/i.test(c.req.header('prefer') ?? '')

  /** The accepted answer of an asynchronous run (202), or the finished result (200). */
  const answer = async (c: Context, operationId: string, run: StoredRun): Promise<Response> => {
    if (wantsAsync(c)) {
      return c.json(
        {
          run_id: run.id,
          state: run.state,
          agent_url: run.agent_url,
          storyboard_ids: run.storyboard_ids,
          history_url: `${deps.publicUrl(c)}/api/registry/agents/${encodeURIComponent(run.agent_url)}/compliance/history`,
        },
        202,
        { 'Preference-Applied': 'respond-async' },
      )
    }
    const finished = await runs.wait(run.id, parts.syncWaitMs)
    if (finished?.state === 'failed' && !finished.result) {
      throw new HttpError(
        500,
        'run_failed',
        `run ${run.id} failed inside the registry: ${finished.error ?? 'unknown'}`,
        {
          run_id: run.id,
        },
      )
    }
    if (!finished?.result || (finished.state !== 'completed' && finished.state !== 'failed')) {
      throw new HttpError(
        500,
        'run_not_finished',
        `run ${run.id} is still ${finished?.state ?? 'queued'}; read it from the compliance history, or send Prefer: respond-async`,
        { run_id: run.id },
      )
    }
    return reply(c, deps, operationId, finished.result)
  }

  app.post('/api/registry/agents/:encodedUrl/storyboard/:storyboardId/run', async (c) => {
    await requirePrincipal(c, deps)
    const body = await optionalBody<{ organization_id?: string }>(c, 'runStoryboard')
    const agentUrl = agentUrlParam(c.req.param('encodedUrl'), 'encodedUrl')
    const entry = storyboardParam(c.req.param('storyboardId'))
    const orgId = await authorizeAgentLister(c, deps, agentUrl, body.organization_id)
    const run = await runs.submit({
      agentUrl,
      orgId,
      trigger: 'manual',
      storyboardIds: [entry.storyboard.id],
      options: { requestedComplianceTarget: target(c.req.query('compliance_target')) },
    })
    return answer(c, 'runStoryboard', run)
  })

  app.post('/api/registry/agents/:encodedUrl/storyboard/:storyboardId/step/:stepId', async (c) => {
    await requirePrincipal(c, deps)
    const body = await optionalBody<{
      context?: Record<string, unknown>
      dry_run?: boolean
      organization_id?: string
    }>(c, 'runStoryboardStep')
    const agentUrl = agentUrlParam(c.req.param('encodedUrl'), 'encodedUrl')
    const entry = storyboardParam(c.req.param('storyboardId'))
    const stepId = c.req.param('stepId')
    const orgId = await authorizeAgentLister(c, deps, agentUrl, body.organization_id)
    if (!entry.storyboard.phases.some((phase) => phase.steps.some((step) => step.id === stepId))) {
      throw new HttpError(404, 'step_not_found', `storyboard ${entry.storyboard.id} has no step ${stepId}`)
    }
    const run = await runs.submit({
      agentUrl,
      orgId,
      trigger: 'step',
      storyboardIds: [entry.storyboard.id],
      options: {
        requestedComplianceTarget: target(c.req.query('compliance_target')),
        stepId,
        ...(body.context ? { context: body.context } : {}),
        dryRun: body.dry_run ?? true,
      },
    })
    return answer(c, 'runStoryboardStep', run)
  })

  app.post('/api/registry/agents/:encodedUrl/storyboard/:storyboardId/compare', async (c) => {
    await requirePrincipal(c, deps)
    const body = await optionalBody<{ organization_id?: string }>(c, 'compareStoryboard')
    const agentUrl = agentUrlParam(c.req.param('encodedUrl'), 'encodedUrl')
    const entry = storyboardParam(c.req.param('storyboardId'))
    const orgId = await authorizeAgentLister(c, deps, agentUrl, body.organization_id)
    if (!parts.reference) {
      throw new HttpError(
        500,
        'reference_agent_unconfigured',
        'this registry has no reference agent to compare with (COMPLIANCE_REFERENCE_AGENT_URL)',
      )
    }
    const run = await runs.submit({
      agentUrl,
      orgId,
      trigger: 'compare',
      storyboardIds: [entry.storyboard.id],
      options: {
        requestedComplianceTarget: target(c.req.query('compliance_target')),
        reference: parts.reference,
      },
    })
    return answer(c, 'compareStoryboard', run)
  })

  app.get('/api/registry/agents/:encodedUrl/compliance/history', async (c) => {
    const agentUrl = agentUrlParam(c.req.param('encodedUrl'), 'encodedUrl')
    const limit = intParam(c.req.query('limit'), 'limit', 30, 1, 100)
    const history = await runs.store.history(agentUrl, limit)
    return reply(c, deps, 'getAgentComplianceHistory', {
      agent_url: agentUrl,
      runs: history.map(historyEntry),
      count: history.length,
    })
  })

  app.get('/api/registry/agents/:encodedUrl/compliance/diagnostics', async (c) => {
    await requirePrincipal(c, deps)
    const agentUrl = agentUrlParam(c.req.param('encodedUrl'), 'encodedUrl')
    const requested = c.req.query('run_id')
    const runId = requested === undefined || requested === '' ? undefined : uuidParam(requested, 'run_id')
    const limit = intParam(c.req.query('limit'), 'limit', 500, 1, 1000)
    await authorizeAgentControl(c, deps, agentUrl)
    const run = runId ? await runs.store.get(runId) : await runs.store.latestRun(agentUrl)
    // A run of another agent is not this agent's: the same empty answer as no run.
    const own = run !== undefined && canonicalAgentUrl(run.agent_url) === canonicalAgentUrl(agentUrl)
    const diagnostics = own ? await runs.store.diagnostics(run.id, limit) : []
    return reply(c, deps, 'getAgentComplianceStepDiagnostics', {
      agent_url: agentUrl,
      run_id: own ? run.id : null,
      count: diagnostics.length,
      diagnostics,
    })
  })

  const statuses = async (agentUrl: string) =>
    (await runs.store.latestVerdicts(agentUrl)).map((verdict) => ({
      storyboard_id: verdict.storyboard_id,
      requested_compliance_target: verdict.requested_compliance_target,
      adcp_version: verdict.adcp_version,
      title: verdict.title,
      category: verdict.category,
      track: verdict.track,
      status: verdict.status,
      steps_passed: verdict.steps_passed,
      steps_total: verdict.steps_total,
      failure_count: verdict.failure_count,
      skipped_count: verdict.skipped_count,
      first_failed_step_id: verdict.first_failed_step_id,
      first_failed_step_title: verdict.first_failed_step_title,
      first_failed_step_task: verdict.first_failed_step_task,
      first_failure_message: verdict.first_failure_message,
      last_tested_at: verdict.tested_at,
      last_passed_at: verdict.last_passed_at,
    }))

  app.get('/api/registry/agents/:encodedUrl/storyboard-status', async (c) => {
    await member(c)
    const agentUrl = agentUrlParam(c.req.param('encodedUrl'), 'encodedUrl')
    const storyboards = await statuses(agentUrl)
    return reply(c, deps, 'getAgentStoryboardStatus', {
      agent_url: agentUrl,
      storyboards,
      passing_count: storyboards.filter((storyboard) => storyboard.status === 'passing').length,
      total_count: storyboards.length,
    })
  })

  app.post('/api/registry/agents/storyboard-status', async (c) => {
    await member(c)
    const body = await readBody<{ agent_urls: string[] }>(c, 'bulkAgentStoryboardStatus')
    const agents: Record<string, unknown> = {}
    let invalid = 0
    for (const url of body.agent_urls) {
      if (!isHttpUrl(url) || url.length > 2048) {
        invalid += 1
        continue
      }
      agents[url] = await statuses(url)
    }
    return reply(c, deps, 'bulkAgentStoryboardStatus', { agents, invalid_urls: invalid })
  })

  app.get('/api/registry/agents/:encodedUrl/applicable-storyboards', async (c) => {
    await requirePrincipal(c, deps)
    const agentUrl = agentUrlParam(c.req.param('encodedUrl'), 'encodedUrl')
    const requested = target(c.req.query('compliance_target'))
    const orgId = await authorizeAgentLister(c, deps, agentUrl, c.req.query('org'))
    const bundle = storyboardBundle()
    // The caller's own credential for the agent, never another organization's.
    const credential = await parts.credentials?.credentialFor(agentUrl, orgId)
    const probe = await withDeadline(parts.probeDeadlineMs, `capabilities of ${agentUrl}`, async () => {
      const agent = await openAgent(agentUrl, { fetch: parts.fetch, ...(credential ? { credential } : {}) })
      try {
        const tasks = agent.tools.map((tool) => tool.name)
        let capabilities: Record<string, unknown> = {}
        let error: string | undefined
        if (tasks.includes('get_adcp_capabilities')) {
          try {
            capabilities = await agent.call('get_adcp_capabilities', {})
          } catch (failure) {
            error = (failure instanceof Error ? failure.message : String(failure))
              .replace(/[^\x20-\x7e]/g, ' ')
              .slice(0, 500)
          }
        }
        return { name: agent.name, tasks, capabilities, error }
      } finally {
        await agent.close().catch(() => {})
      }
    }).catch((error: unknown) => {
      if (!(error instanceof ProbeError)) throw error
      if (error.kind === 'timeout') throw new HttpError(504, 'agent_timeout', error.message)
      if (/\b401\b|unauthori[sz]ed/i.test(error.message)) {
        throw new HttpError(
          422,
          'agent_requires_auth',
          'the agent requires authentication: save its credentials first',
          {
            needs_auth: true,
          },
        )
      }
      throw new HttpError(500, 'capabilities_probe_failed', error.message, {
        reason: error.kind === 'refused' || error.kind === 'unreachable' ? 'network' : 'protocol',
      })
    })
    const protocols = Array.isArray(probe.capabilities.supported_protocols)
      ? probe.capabilities.supported_protocols.map(String)
      : []
    const specialisms = Array.isArray(probe.capabilities.specialisms)
      ? probe.capabilities.specialisms.map(String)
      : []
    const known = knownSpecialisms(bundle)
    const unknown = specialisms.find((specialism) => !known.includes(specialism))
    if (unknown) {
      throw new HttpError(
        422,
        'unknown_specialism',
        `the agent declares specialism ${unknown}, which the 3.1.19 bundle does not define`,
        {
          error_kind: 'unknown_specialism',
          unknown_specialism: true,
          specialism: unknown,
          declared_specialisms: specialisms,
          declared_protocols: protocols,
          known_specialisms: known,
        },
      )
    }
    const bundles = applicableBundles(
      {
        tasks: new Set(probe.tasks),
        capabilities: probe.capabilities,
        contracts: new Set(),
        seededState: false,
      },
      bundle,
    )
    return reply(c, deps, 'getApplicableStoryboards', {
      agent_url: agentUrl,
      requested_compliance_target: requested,
      adcp_version: bundle.version,
      agent_name: probe.name,
      supported_protocols: protocols,
      specialisms,
      ...(probe.error ? { capabilities_probe_error: probe.error } : {}),
      bundles,
      total_storyboards: bundles.reduce((sum, group) => sum + group.storyboards.length, 0),
    })
  })

  return app
}
