/**
 * The registry's one authorization layer: which caller may act on what. Every operation of the official document
 * has an access class in {@link OPERATION_ACCESS} (the ownership matrix test fails for an operation without one);
 * the gate ({@link accessGate}) authenticates and enforces the class before rate limiting and before the route
 * runs, and the routes ask the resource-level questions here (who owns this property, who controls this agent)
 * instead of deciding ownership themselves.
 *
 * Ownership model (README, "Ownership"):
 * - A **community property** (`saveProperty`) belongs to the organization the registry hosts it for (the verified
 *   owner bound by `verifyHostedPropertyOrigin`), else to the organization that saved it first.
 * - A **brand** or **policy** saved through the API belongs to the organization that saved it first; a hosted brand
 *   to the hosted domain's owner.
 * - An **agent URL** may be listed by several organizations (`registerMemberAgent`), each for itself (its own
 *   listing, credentials and runs). What changes the agent for everyone — compliance opt-out, lifecycle,
 *   monitoring, refresh — and its run diagnostics belong to the organization that **controls** it: the one named by
 *   the agent's own control file (`<agent origin>/.well-known/adcp-agent-control.json`,
 *   `{"organization_id": "org_…"}`, checked by `POST /api/registry/agents/{encodedUrl}/control/verify`), or, while
 *   nobody has proved control, the organization that registered it first — never one that registered it later.
 */
import type { Context, MiddlewareHandler } from 'hono'
import type { AgentCredentialSource } from '../compliance/contract.js'
import type { Principal, RegistryDeps } from '../deps.js'
import { isAdmin } from '../routes/brand-discovery.js'
import { HttpError, requireOrg, requirePrincipal } from '../routes/http.js'

/**
 * The access classes.
 * - `public`: no credential; registry-wide public data (a credential, when sent, must be valid — a wrong one is
 *   a 401, never an anonymous call — and changes nothing it may see of another organization).
 * - `optional`: secured in the document, but one read-only mode is open to anyone (`resolveIdentifiers` with
 *   `mode: lookup`); every other call needs a credential, which the route asks of this layer after reading the mode.
 * - `member`: a valid credential; the operation acts only within the caller's own organization (its crawl
 *   requests, feed cursor, listing, disputes) or on registry-wide data every member may read.
 * - `org-owned-read` / `org-owned-write`: reads or writes a resource an organization owns; only that
 *   organization (another gets 403 or 404).
 * - `agent-control`: changes or reads what is shared for an agent URL; only its controller.
 * - `agent-lister`: acts for the caller's organization on an agent it lists (its own runs and credentials).
 * - `proof-of-control`: any member may ask; the outcome is decided by a proof the resource's origin serves.
 * - `moderator`: community-mirror moderators only (`admin grant-moderator`).
 * - `admin`: the registry administrator bearer (`ADMIN_API_KEY`) only.
 */
export type AccessClass =
  | 'public'
  | 'optional'
  | 'member'
  | 'org-owned-read'
  | 'org-owned-write'
  | 'agent-control'
  | 'agent-lister'
  | 'proof-of-control'
  | 'moderator'
  | 'admin'

/** Every operation of the registry document, classified. */
export const OPERATION_ACCESS: Readonly<Record<string, AccessClass>> = {
  // Public reads and stateless tools.
  apiDiscovery: 'public',
  resolveBrand: 'public',
  resolveBrandsBulk: 'public',
  getBrandJson: 'public',
  listBrands: 'public',
  getBrandHistory: 'public',
  enrichBrand: 'public',
  findBrand: 'public',
  getPropertyHistory: 'public',
  resolveProperty: 'public',
  resolvePropertiesBulk: 'public',
  listProperties: 'public',
  validateProperty: 'public',
  checkPropertyList: 'public',
  getPropertyCheckReport: 'public',
  bulkPropertyCheck: 'public',
  getBulkPropertyCheckReport: 'public',
  listAgents: 'public',
  listPublishers: 'public',
  getRegistryStats: 'public',
  lookupDomain: 'public',
  lookupProperty: 'public',
  getAgentDomains: 'public',
  getPublishersForAgentLegacyApiPrefix: 'public',
  getPublishersForAgent: 'public',
  lookupOperator: 'public',
  lookupPublisher: 'public',
  lookupPublisherAgentAuthorization: 'public',
  validateProductAuthorization: 'public',
  expandProductIdentifiers: 'public',
  validatePropertyAuthorization: 'public',
  validateAdagents: 'public',
  createAdagents: 'public',
  listCommunityMirrors: 'public',
  getCommunityMirror: 'public',
  search: 'public',
  lookupManifestRef: 'public',
  discoverAgent: 'public',
  getAgentFormats: 'public',
  getAgentPublishers: 'public',
  getAgentProducts: 'public',
  validatePublisher: 'public',
  listPolicies: 'public',
  resolvePolicy: 'public',
  resolvePoliciesBulk: 'public',
  getPolicyHistory: 'public',
  getAgentCompliance: 'public',
  getAgentVerification: 'public',
  getAgentBadgeSvg: 'public',
  getAgentBadgeEmbed: 'public',
  getAgentBadgeVersionedSvg: 'public',
  getAgentBadgeVersionedEmbed: 'public',
  getAgentComplianceHistory: 'public',
  getJwks: 'public',
  listStoryboards: 'public',
  getStoryboard: 'public',
  getStoryboardFirstStep: 'public',
  browseCatalog: 'public',
  syncCatalog: 'public',
  getCatalogDispute: 'public',
  // Members, acting within their own organization or reading registry-wide data.
  createOrganization: 'member',
  registerMemberAgent: 'member',
  getRegistryFeed: 'member',
  streamRegistryFeed: 'member',
  getAgentAuthorizations: 'member',
  getAgentAuthorizationsSnapshot: 'member',
  searchAgentProfiles: 'member',
  requestCrawl: 'member',
  getCrawlRequest: 'member',
  requestManagerRevalidation: 'member',
  requestBrandCrawl: 'member',
  getAgentStoryboardStatus: 'member',
  bulkAgentStoryboardStatus: 'member',
  getAgentAuthStatus: 'member',
  resolveIdentifiers: 'optional',
  fileCatalogDispute: 'member',
  listCommunityMirrorProposals: 'member',
  // A moderator publishes; anyone else's PUT becomes a proposal for the moderators.
  publishCommunityMirror: 'member',
  // Organization-owned resources.
  listMemberAgents: 'org-owned-read',
  getCommunityMirrorProposal: 'org-owned-read',
  updateMemberAgent: 'org-owned-write',
  removeMemberAgent: 'org-owned-write',
  saveBrand: 'org-owned-write',
  setupMyBrand: 'org-owned-write',
  saveProperty: 'org-owned-write',
  savePolicy: 'org-owned-write',
  // What an agent URL's controller alone may change or read.
  updateAgentLifecycle: 'agent-control',
  updateAgentComplianceOptOut: 'agent-control',
  getAgentMonitoringSettings: 'agent-control',
  updateAgentMonitoringPause: 'agent-control',
  updateAgentMonitoringInterval: 'agent-control',
  requeueAgentForHeartbeat: 'agent-control',
  getAgentMonitoringRequests: 'agent-control',
  getAgentComplianceStepDiagnostics: 'agent-control',
  refreshAgent: 'agent-control',
  // An organization's own dealings with an agent it lists.
  connectAgent: 'agent-lister',
  saveAgentOAuthClientCredentials: 'agent-lister',
  testAgentOAuthClientCredentials: 'agent-lister',
  runStoryboard: 'agent-lister',
  runStoryboardStep: 'agent-lister',
  compareStoryboard: 'agent-lister',
  getApplicableStoryboards: 'agent-lister',
  // Decided by a proof at the origin.
  claimHostedPropertyDomain: 'proof-of-control',
  verifyHostedPropertyOrigin: 'proof-of-control',
  // Moderators and administrators.
  approveCommunityMirrorProposal: 'moderator',
  rejectCommunityMirrorProposal: 'moderator',
  deleteCommunityMirror: 'moderator',
  forceBrandCrawl: 'admin',
  revalidatePublisherAdagents: 'admin',
}

/** Whether the gate demands a credential for every call of an operation of this class. */
export const needsCredential = (access: AccessClass): boolean => access !== 'public' && access !== 'optional'

/** Whether an operation of this class needs a credential by default (the document's `security`). */
export const lockedByDefault = (access: AccessClass): boolean => access !== 'public'

/** The class of an operation; throws for an unclassified one (a new operation must be classified here). */
export function accessOf(operationId: string): AccessClass {
  const access = OPERATION_ACCESS[operationId]
  if (!access) throw new Error(`operation ${operationId} has no access class in auth/authorize.ts`)
  return access
}

/** The document's path in Hono's syntax (`/api/me/agents/{url}` → `/api/me/agents/:url`). */
export const honoPath = (path: string): string => path.replace(/\{([^}]+)\}/g, ':$1')

/**
 * The gate of one operation: authenticates every operation that needs a credential (401 with `WWW-Authenticate`
 * for an anonymous or invalid caller; the administrator bearer passes for `admin` operations), and on every other
 * operation a bearer that is sent (a wrong bearer is a 401 too, never served as an anonymous call; no
 * `Authorization` header is the anonymous call). Mounted on every operation before the rate limiter, so an
 * anonymous call to a locked operation is a 401, never a 429. The role checks
 * ({@link requireAdmin}, {@link requireModerator}) and the resource checks run in the route after its input is
 * validated, so a malformed call is a 400 as the document orders it.
 */
export function accessGate(deps: RegistryDeps, operationId: string): MiddlewareHandler {
  return gateOf(deps, accessOf(operationId))
}

/**
 * The routes this service adds outside the document, with their access class (gated like the document's).
 * `verifyAgentControl` fetches the agent's control file: it is rate-limited as a crawl.
 */
export const ADDED_ROUTES: ReadonlyArray<readonly [string, string, AccessClass]> = [
  ['POST', '/api/registry/agents/:encodedUrl/control/verify', 'member'],
]

/** Whether the request presents a bearer credential (any `Authorization: Bearer <token>`). */
const presentsBearer = (c: Context): boolean => /^Bearer\s+\S+/i.test(c.req.header('authorization') ?? '')

/** The gate of an access class (see {@link accessGate}). */
export function gateOf(deps: RegistryDeps, access: AccessClass): MiddlewareHandler {
  return async (c, next) => {
    if (!needsCredential(access)) {
      // The administrator bearer is a valid credential too (it is no principal of an organization).
      if (presentsBearer(c) && !isAdmin(c, deps)) await requirePrincipal(c, deps)
      return next()
    }
    if (access === 'admin' && isAdmin(c, deps)) return next()
    await requirePrincipal(c, deps)
    return next()
  }
}

/** 403 unless the request carries the administrator bearer (`ADMIN_API_KEY`). */
export function requireAdmin(c: Context, deps: RegistryDeps, what: string): void {
  if (!isAdmin(c, deps)) throw new HttpError(403, 'admin_required', `${what} are for registry administrators`)
}

/** Whether the caller's organization moderates community mirrors (`admin grant-moderator`). */
export async function isModerator(deps: RegistryDeps, principal: Principal): Promise<boolean> {
  const org = principal.orgId ?? (principal.kind === 'org' ? principal.id : undefined)
  return org !== undefined && (await deps.repository.mirrors.isModerator(org))
}

/** 403 unless the caller's organization moderates community mirrors. */
export async function requireModerator(deps: RegistryDeps, principal: Principal): Promise<void> {
  if (!(await isModerator(deps, principal))) {
    throw new HttpError(
      403,
      'moderator_required',
      'only registry moderators may review proposals and manage community mirrors',
    )
  }
}

/** The caller's organization (403 without one, or when it names another organization). */
export async function callerOrg(c: Context, deps: RegistryDeps, requested?: string): Promise<string> {
  return requireOrg(await requirePrincipal(c, deps), requested)
}

/**
 * 403 unless `orgId` may write a resource whose owner is `owner` (`undefined`: nobody owns it yet, so the caller
 * may, and becomes its owner).
 */
export function requireOwnerOrUnowned(
  orgId: string,
  owner: string | undefined,
  code: string,
  what: string,
  extra: Record<string, unknown> = {},
): void {
  if (owner !== undefined && owner !== orgId)
    throw new HttpError(403, code, `${what} belongs to another organization`, extra)
}

/**
 * Who owns a brand: a hosted brand belongs to its domain's bound owner (nobody's while unbound, so nobody may
 * save over it), a community brand to the organization that saved it first.
 */
export async function brandOwner(
  deps: RegistryDeps,
  domain: string,
  existing: { source: string; owner_org_id?: string } | undefined,
): Promise<string | undefined> {
  if (existing?.source === 'hosted')
    return (
      (await deps.repository.hosting.getHostedDomain(domain))?.owner_org_id ??
      'nobody (unbound hosted domain)'
    )
  return existing?.owner_org_id
}

/** 403 unless `orgId` is the bound owner of the registry-hosted `domain` (bound only by origin verification). */
export async function requireHostedDomainOwner(
  deps: RegistryDeps,
  orgId: string,
  domain: string,
): Promise<void> {
  if ((await deps.repository.hosting.getHostedDomain(domain))?.owner_org_id !== orgId)
    throw new HttpError(
      403,
      'domain_not_owned',
      `${domain} is not owned by your organization: claim it (POST /api/properties/hosted/${domain}/claim), ` +
        'place the pointer at its origin and verify it (…/verify-origin) first',
      { domain },
    )
}

/** Who owns the community property of a publisher domain: the hosted domain's owner, else its first saver. */
export async function propertyOwner(deps: RegistryDeps, domain: string): Promise<string | undefined> {
  const hosted = await deps.repository.hosting.getHostedDomain(domain)
  if (hosted?.owner_org_id) return hosted.owner_org_id
  return (await deps.repository.owners.owner('property', domain))?.org_id
}

/**
 * Authorizes a write of the community property of `domain`; resolves to the caller's organization, recorded as the
 * owner when the property had none.
 */
export async function authorizePropertyWrite(
  c: Context,
  deps: RegistryDeps,
  domain: string,
): Promise<string> {
  const orgId = await callerOrg(c, deps)
  requireOwnerOrUnowned(
    orgId,
    await propertyOwner(deps, domain),
    'property_not_owned',
    `the property of ${domain}`,
    {
      domain,
    },
  )
  await deps.repository.owners.claim(
    'property',
    domain,
    orgId,
    'first_save',
    new Date(deps.now()).toISOString(),
  )
  return orgId
}

export interface AgentController {
  readonly orgId: string
  /** `agent_control_file`: proved at the agent's origin; `first_registrant`: nobody proved control yet. */
  readonly proof: string
}

/** The organization that controls an agent URL (see the module comment), if anyone lists or proved it. */
export async function agentController(
  deps: Pick<RegistryDeps, 'repository'>,
  agentUrl: string,
): Promise<AgentController | undefined> {
  const proven = await deps.repository.owners.owner('agent', agentUrl)
  if (proven) return { orgId: proven.org_id, proof: proven.proof }
  const first = await deps.repository.owners.firstRegistrant(agentUrl)
  return first ? { orgId: first, proof: 'first_registrant' } : undefined
}

/**
 * The credentials runs and probes present: an organization's run presents that organization's own credential for
 * the agent; a run of the registry's (heartbeat, reference agent, probe) presents the agent's controller's. Never
 * another organization's (before: whichever organization saved one last, so a later lister's bogus token failed
 * the owner's heartbeats, and its runs borrowed the owner's token).
 */
export function controllerCredentials(
  repository: RegistryDeps['repository'],
  store: AgentCredentialSource,
): AgentCredentialSource {
  return {
    async credentialFor(agentUrl, orgId) {
      const org = orgId ?? (await agentController({ repository }, agentUrl))?.orgId
      return org === undefined ? undefined : store.credentialFor(agentUrl, org)
    },
  }
}

/** The path, on the agent's own origin, of the control file that proves which organization controls it. */
export const AGENT_CONTROL_PATH = '/.well-known/adcp-agent-control.json'

/** Where an agent's control file lives. */
export const agentControlUrl = (agentUrl: string): string =>
  `${new URL(agentUrl).origin}${AGENT_CONTROL_PATH}`

/**
 * Authorizes a change (or read) of what is shared for an agent URL: only its controller. Resolves to the
 * caller's organization.
 */
export async function authorizeAgentControl(
  c: Context,
  deps: RegistryDeps,
  agentUrl: string,
  requestedOrg?: string,
): Promise<string> {
  const orgId = await callerOrg(c, deps, requestedOrg)
  const controller = await agentController(deps, agentUrl)
  if (controller?.orgId === orgId) return orgId
  const lists = (await deps.repository.members.getMemberAgent(orgId, agentUrl)) !== undefined
  if (!lists && controller === undefined)
    throw new HttpError(403, 'not_agent_owner', `your organization has not registered ${agentUrl}`)
  throw new HttpError(
    403,
    'not_agent_controller',
    `another organization controls ${agentUrl} (${controller?.proof ?? 'unknown'}); to prove your organization controls it, serve {"organization_id": "${orgId}"} at ${agentControlUrl(agentUrl)} and call POST /api/registry/agents/{encodedUrl}/control/verify`,
  )
}

/** Authorizes an organization's own dealings with an agent it lists; resolves to that organization. */
export async function authorizeAgentLister(
  c: Context,
  deps: RegistryDeps,
  agentUrl: string,
  requestedOrg?: string,
): Promise<string> {
  const orgId = await callerOrg(c, deps, requestedOrg)
  if (!(await deps.repository.members.getMemberAgent(orgId, agentUrl)))
    throw new HttpError(403, 'not_agent_owner', `your organization has not registered ${agentUrl}`)
  return orgId
}

/**
 * Checks the agent's control file and records the organization it names as the agent's controller when that is
 * the caller's organization. Resolves to what was found.
 */
export async function verifyAgentControl(
  c: Context,
  deps: RegistryDeps,
  agentUrl: string,
): Promise<{ verified: boolean; organization_id: string | null; reason: string; control_url: string }> {
  const orgId = await callerOrg(c, deps)
  const url = agentControlUrl(agentUrl)
  const probe = await deps.crawler.probe(url)
  const named =
    probe.json && typeof probe.json === 'object' && !Array.isArray(probe.json)
      ? (probe.json as Record<string, unknown>).organization_id
      : undefined
  const reason = probe.failure
    ? `unreachable: ${probe.failure.reason}`
    : probe.status !== 200
      ? `HTTP ${probe.status ?? 'error'}`
      : typeof named !== 'string'
        ? 'the control file has no organization_id string'
        : named !== orgId
          ? 'the control file names another organization'
          : 'verified'
  if (reason !== 'verified')
    return {
      verified: false,
      organization_id: typeof named === 'string' ? named : null,
      reason,
      control_url: url,
    }
  await deps.repository.owners.prove(
    'agent',
    agentUrl,
    orgId,
    'agent_control_file',
    new Date(deps.now()).toISOString(),
  )
  return { verified: true, organization_id: orgId, reason, control_url: url }
}
