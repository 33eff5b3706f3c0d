/**
 * The registry's HTTP app (pure: everything it uses comes in `deps`): the in-scope operations of the
 * registry OpenAPI document, the auth module's routes, `/openapi.json`, `/docs`, `/health` and the hosted files
 * (`/hosted/{domain}/adagents.json`, `/hosted/{domain}/brand.json`).
 */
import { Hono } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { JWK } from 'jose'
import { accessGate, ADDED_ROUTES, gateOf, honoPath } from './auth/authorize.js'
import type { AgentProber } from './compliance/probe-agents.js'
import type { ComplianceRuns } from './compliance/runs.js'
import { createDiscoveryJobs, type DiscoveryJobs } from './crawl/discovery-jobs.js'
import type { CrawlQueue } from './crawl/queue.js'
import type { RegistryDeps } from './deps.js'
import { agentControlRoutes } from './routes/agent-control.js'
import { agentDiscoveryRoutes } from './routes/agent-discovery.js'
import { brandDiscoveryRoutes } from './routes/brand-discovery.js'
import { brandSetupRoutes } from './routes/brand-setup.js'
import { complianceStatusRoutes } from './routes/compliance-status.js'
import { brandRoutes } from './routes/brands.js'
import { catalogRoutes } from './routes/catalog.js'
import { complianceRunRoutes } from './routes/compliance-runs.js'
import { probingRoutes } from './routes/probing.js'
import { storyboardRoutes } from './routes/storyboards.js'
import { discoveryRoutes } from './routes/discovery.js'
import { docsRoutes } from './routes/docs.js'
import { feedRoutes } from './routes/feed.js'
import { hostedRoutes } from './routes/hosted.js'
import { errorBody, HttpError, MAX_URL_LENGTH } from './routes/http.js'
import { lookupRoutes } from './routes/lookups.js'
import { memberRoutes } from './routes/members.js'
import { mirrorRoutes } from './routes/mirrors.js'
import { policyRoutes } from './routes/policies.js'
import { propertyRoutes } from './routes/properties.js'
import { publisherLookupRoutes } from './routes/publisher-lookup.js'
import { createRateLimiter, RATE_LIMITED_ROUTES } from './routes/rate-limit.js'
import { searchRoutes } from './routes/search.js'
import { validationRoutes } from './routes/validation.js'
import type { RateLimits } from './env.js'
import { operations } from './spec/openapi.js'

/** The operationIds this service answers (the rest of the document comes in part 2). */
export const IMPLEMENTED_OPERATIONS: ReadonlySet<string> = new Set([
  'createOrganization',
  'listMemberAgents',
  'registerMemberAgent',
  'updateMemberAgent',
  'removeMemberAgent',
  'resolveBrand',
  'resolveBrandsBulk',
  'getBrandJson',
  'listBrands',
  'findBrand',
  'getBrandHistory',
  'enrichBrand',
  'saveBrand',
  'setupMyBrand',
  'resolveProperty',
  'resolvePropertiesBulk',
  'listProperties',
  'validateProperty',
  'getPropertyHistory',
  'saveProperty',
  'claimHostedPropertyDomain',
  'verifyHostedPropertyOrigin',
  'checkPropertyList',
  'getPropertyCheckReport',
  'bulkPropertyCheck',
  'getBulkPropertyCheckReport',
  'expandProductIdentifiers',
  'validateProductAuthorization',
  'validatePropertyAuthorization',
  'lookupProperty',
  'lookupDomain',
  'getAgentDomains',
  'lookupPublisherAgentAuthorization',
  'lookupOperator',
  'lookupPublisher',
  'revalidatePublisherAdagents',
  'getPublishersForAgent',
  'getPublishersForAgentLegacyApiPrefix',
  'validateAdagents',
  'createAdagents',
  'getRegistryFeed',
  'streamRegistryFeed',
  'getAgentAuthorizations',
  'getAgentAuthorizationsSnapshot',
  'listAgents',
  'listPublishers',
  'getRegistryStats',
  'requestCrawl',
  'getCrawlRequest',
  'listCommunityMirrorProposals',
  'getCommunityMirrorProposal',
  'approveCommunityMirrorProposal',
  'rejectCommunityMirrorProposal',
  'listCommunityMirrors',
  'getCommunityMirror',
  'publishCommunityMirror',
  'deleteCommunityMirror',
  'listPolicies',
  'resolvePolicy',
  'resolvePoliciesBulk',
  'getPolicyHistory',
  'savePolicy',
  'browseCatalog',
  'syncCatalog',
  'resolveIdentifiers',
  'fileCatalogDispute',
  'getCatalogDispute',
  // Agent Compliance, status side (routes/compliance-status.ts)
  'getAgentCompliance',
  'getAgentVerification',
  'getAgentBadgeSvg',
  'getAgentBadgeEmbed',
  'getAgentBadgeVersionedSvg',
  'getAgentBadgeVersionedEmbed',
  'updateAgentLifecycle',
  'updateAgentComplianceOptOut',
  'getAgentMonitoringSettings',
  'updateAgentMonitoringPause',
  'updateAgentMonitoringInterval',
  'requeueAgentForHeartbeat',
  'getAgentMonitoringRequests',
  'refreshAgent',
  'getAgentAuthStatus',
  'connectAgent',
  'saveAgentOAuthClientCredentials',
  'testAgentOAuthClientCredentials',
  'discoverAgent',
  'getAgentFormats',
  'getAgentPublishers',
  'getAgentProducts',
  'validatePublisher',
  'listStoryboards',
  'getStoryboard',
  'getStoryboardFirstStep',
  'runStoryboard',
  'runStoryboardStep',
  'compareStoryboard',
  'getAgentComplianceHistory',
  'getAgentComplianceStepDiagnostics',
  'getAgentStoryboardStatus',
  'bulkAgentStoryboardStatus',
  'getApplicableStoryboards',
  'getJwks',
  'apiDiscovery',
  'search',
  'lookupManifestRef',
  'requestBrandCrawl',
  'forceBrandCrawl',
  'searchAgentProfiles',
  'requestManagerRevalidation',
])

export interface AppParts {
  readonly queue: CrawlQueue
  /** Per-minute budgets of the rate-limited operations; default: unlimited. */
  readonly rateLimits?: RateLimits
  /** The auth module's routes (OAuth server, metadata), mounted at `/`. */
  readonly authRoutes?: Hono
  /** Agent Probing and the runs half of Agent Compliance (service.ts builds them). */
  readonly compliance?: {
    readonly runs: ComplianceRuns
    readonly prober: AgentProber
    /** The SSRF-safe fetch of agent exchanges. */
    readonly fetch: typeof fetch
    readonly reference?: { readonly url: string; readonly name: string }
    /** The registry's public signing keys (`/api/.well-known/jwks.json`). */
    readonly publicKeys: () => Promise<readonly JWK[]>
    /** How long a synchronous run holds its request, ms. */
    readonly syncWaitMs: number
    /** The capability probe's deadline, ms. */
    readonly probeDeadlineMs: number
  }
  /** Background brand crawls and the manager re-validation drain (default: created here, never stopped). */
  readonly discoveryJobs?: DiscoveryJobs
}

/**
 * @example
 * const app = createApp(deps, { queue, authRoutes: auth.routes })
 * serve({ fetch: app.fetch, port: 4100 })
 */
export function createApp(deps: RegistryDeps, parts: AppParts): Hono {
  const app = new Hono()
  app.use(async (c, next) => {
    for (const [name, values] of Object.entries(c.req.queries())) {
      if (values.some((value) => value.length > MAX_URL_LENGTH)) {
        throw new HttpError(400, 'value_too_long', `${name} is longer than ${MAX_URL_LENGTH} characters`, {
          details: { parameter: name, maximum: MAX_URL_LENGTH },
        })
      }
    }
    await next()
  })
  // Authorization first (auth/authorize.ts): a locked operation authenticates, any operation refuses a wrong
  // bearer, before the rate limiter counts the call and before the route reads anything.
  for (const { method, path, operationId } of operations()) {
    if (IMPLEMENTED_OPERATIONS.has(operationId))
      app.on(method.toUpperCase(), honoPath(path), accessGate(deps, operationId))
  }
  for (const [method, path, access] of ADDED_ROUTES) app.on(method, path, gateOf(deps, access))
  if (parts.rateLimits) {
    const limit = createRateLimiter(deps, parts.rateLimits)
    for (const [method, path, kind] of RATE_LIMITED_ROUTES) app.on(method, path, limit(kind))
  }
  app.get('/health', (c) => c.json({ status: 'ok' }))
  app.get('/', (c) => c.redirect('/docs'))
  if (parts.authRoutes) app.route('/', parts.authRoutes)
  app.route('/', docsRoutes(IMPLEMENTED_OPERATIONS))
  app.route('/', brandRoutes(deps))
  app.route('/', brandSetupRoutes(deps))
  app.route('/', propertyRoutes(deps))
  app.route('/', hostedRoutes(deps))
  app.route('/', publisherLookupRoutes(deps, parts.queue))
  app.route('/', lookupRoutes(deps))
  app.route('/', validationRoutes(deps))
  app.route('/', feedRoutes(deps))
  app.route('/', discoveryRoutes(deps, parts.queue))
  app.route('/', memberRoutes(deps))
  app.route('/', mirrorRoutes(deps))
  app.route('/', policyRoutes(deps))
  app.route('/', catalogRoutes(deps))
  app.route('/', complianceStatusRoutes(deps))
  app.route('/', agentControlRoutes(deps))
  if (parts.compliance) {
    const { compliance } = parts
    app.route('/', probingRoutes(deps, compliance.prober))
    app.route('/', storyboardRoutes(deps, compliance.publicKeys))
    app.route(
      '/',
      complianceRunRoutes(deps, {
        runs: compliance.runs,
        fetch: compliance.fetch,
        ...(deps.compliance?.credentials ? { credentials: deps.compliance.credentials } : {}),
        ...(compliance.reference ? { reference: compliance.reference } : {}),
        syncWaitMs: compliance.syncWaitMs,
        probeDeadlineMs: compliance.probeDeadlineMs,
      }),
    )
  }
  const jobs = parts.discoveryJobs ?? createDiscoveryJobs(deps, parts.queue)
  app.route('/', searchRoutes(deps))
  app.route('/', brandDiscoveryRoutes(deps, jobs))
  app.route('/', agentDiscoveryRoutes(deps, jobs))
  app.notFound((c) => c.json(errorBody('not_found', `no route for ${c.req.method} ${c.req.path}`), 404))
  app.onError((error, c) => {
    if (error instanceof HttpError) {
      for (const [name, value] of Object.entries(error.headers)) c.header(name, value)
      return c.json(errorBody(error.code, error.message, error.extra), error.status)
    }
    if (error instanceof HTTPException) return c.json(errorBody('bad_request', error.message), error.status)
    deps.log({
      error: String(error instanceof Error ? (error.stack ?? error.message) : error),
      path: c.req.path,
    })
    return c.json(errorBody('internal_error', 'the registry failed to answer this request'), 500)
  })
  return app
}
