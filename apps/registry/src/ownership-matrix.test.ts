/**
 * The ownership matrix, generated from the official registry document (conformance/openapi/registry.yaml): every
 * operation has an access class in `auth/authorize.ts` (a new operation fails here until it is classified), and
 * - every operation that needs a credential answers an anonymous caller and a bad credential 401 with
 *   `WWW-Authenticate`, and the document marks exactly those operations secured;
 * - every other (open) operation answers an invalid bearer 401 with `WWW-Authenticate` too, never as an
 *   anonymous call, and still serves a valid member key and the administrator bearer;
 * - every administrator and moderator operation answers a member key 403;
 * - every operation that reads or writes organization-owned data or what an agent URL's controller alone may
 *   change, called by organization B on organization A's resource, answers 403 or 404 and changes nothing (A's
 *   resource is read before and after). B lists A's agent URL too, the hardest case: listing grants no control.
 * Every answer is checked against the served and the upstream document (`api`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lockedByDefault, OPERATION_ACCESS, type AccessClass } from './auth/authorize.js'
import { IMPLEMENTED_OPERATIONS } from './app.js'
import { TEST_CREDENTIALS_KEY } from './compliance/status-testing.js'
import { operations, upstreamDocument, type Operation } from './spec/openapi.js'
import {
  api,
  startSite,
  startTestRegistry,
  type ApiResult,
  type Site,
  type TestRegistry,
} from './testing/registry.js'

const DOCUMENT_OPERATIONS = operations(upstreamDocument())
const UUID = '00000000-0000-4000-8000-000000000000'
const ADMIN_KEY = `admin_${'o'.repeat(40)}`
/** Bearers this registry never issued, in turn: an API key, an access token (JWT-shaped) and free text. */
const INVALID = [
  'sk_not-a-key-of-this-registry',
  'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJub2JvZHkifQ.bm90LWEtc2lnbmF0dXJl',
  'not-a-credential-of-this-registry',
]

let test: TestRegistry
let site: Site
let orgA: { id: string; apiKey: string }
let orgB: { id: string; apiKey: string }
/** An agent both A (first) and B list: A controls it. */
let shared: string
/** An agent only A lists. */
let own: string
let proposalId: string
const enc = (url: string) => encodeURIComponent(url)

beforeAll(async () => {
  site = await startSite()
  test = await startTestRegistry(
    { kind: 'sqlite' },
    {
      seed: false,
      env: {
        AGENT_CREDENTIALS_KEY: TEST_CREDENTIALS_KEY,
        ALLOW_PRIVATE_AGENTS: '1',
        ADMIN_API_KEY: ADMIN_KEY,
      },
    },
  )
  orgA = await test.registry.createOrg('Owner A')
  orgB = await test.registry.createOrg('Other B')
  shared = `${site.origin}/shared/mcp`
  own = `${site.origin}/own/mcp`
  const register = async (token: string, url: string) =>
    expect(
      (
        await api(test.registry, 'registerMemberAgent', '/api/me/agents', {
          token,
          body: { url, type: 'sales' },
        })
      ).status,
    ).toBe(201)
  await register(orgA.apiKey, shared)
  await register(orgB.apiKey, shared)
  await register(orgA.apiKey, own)
  const a = orgA.apiKey
  const ok = async (result: Promise<ApiResult>) => expect((await result).status).toBeLessThan(300)
  await ok(
    api(test.registry, 'saveBrand', '/api/brands/save', {
      token: a,
      body: { domain: 'a-brand.test', brand_name: 'A' },
    }),
  )
  await ok(
    api(test.registry, 'saveProperty', '/api/properties/save', {
      token: a,
      body: { publisher_domain: 'a-property.test', properties: [{ type: 'website', name: 'A' }] },
    }),
  )
  await ok(api(test.registry, 'savePolicy', '/api/policies/save', { token: a, body: POLICY }))
  await test.registry.repository.hosting.bindOwner('a-hosted.test', orgA.id, new Date().toISOString())
  await ok(
    api(test.registry, 'connectAgent', `/api/registry/agents/${enc(own)}/connect`, {
      method: 'PUT',
      token: a,
      body: { auth_token: 'a-secret-token' },
    }),
  )
  const proposal = await api(test.registry, 'publishCommunityMirror', '/api/registry/mirrors/a_platform', {
    method: 'PUT',
    token: a,
    body: {
      catalog_etag: 'etag-a',
      properties: [
        {
          property_id: 'a_site',
          property_type: 'website',
          name: 'A',
          identifiers: [{ type: 'domain', value: 'a-mirror.test' }],
          publisher_domain: 'a-mirror.test',
        },
      ],
    },
  })
  expect(proposal.status).toBe(202)
  proposalId = String(proposal.body.proposal_id)
  // A moderator's published mirror, for the moderator-only delete.
  const moderator = await test.registry.createOrg('Moderator C')
  await test.registry.repository.mirrors.grantModerator(moderator.id, new Date().toISOString())
  await ok(
    api(test.registry, 'publishCommunityMirror', '/api/registry/mirrors/c_platform', {
      method: 'PUT',
      token: moderator.apiKey,
      body: {
        catalog_etag: 'etag-c',
        properties: [
          {
            property_id: 'c_site',
            property_type: 'website',
            name: 'C',
            identifiers: [{ type: 'domain', value: 'c-mirror.test' }],
            publisher_domain: 'c-mirror.test',
          },
        ],
      },
    }),
  )
})

afterAll(async () => {
  await test?.registry.close()
  await test?.cleanup()
  await site?.close()
})

const POLICY = {
  policy_id: 'a_policy',
  version: '1.0.0',
  name: 'A Policy',
  category: 'standard',
  enforcement: 'should',
  policy: 'Ads must not appear next to content depicting graphic violence.',
  jurisdictions: ['US'],
  governance_domains: ['creative'],
  policy_categories: ['brand_safety'],
}

/** A concrete path of an operation: each `{parameter}` filled with a plausible value. */
function concrete(operation: Operation): string {
  const values: Record<string, string> = {
    encodedUrl: enc(shared),
    url: enc(own),
    domain: 'a-property.test',
    id: UUID,
    reportId: UUID,
    crawlRequestId: UUID,
    platform: 'a_platform',
    storyboardId: 'capability_discovery',
    stepId: 'x',
    role: 'sales',
    version: '3.1',
  }
  return operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => values[name] ?? 'x')
}

const call = (operation: Operation, token?: string) =>
  api(test.registry, operation.operationId, concrete(operation), {
    method: operation.method.toUpperCase(),
    ...(operation.raw.requestBody ? { body: {} } : {}),
    ...(token ? { token } : {}),
  })

describe('the access classes of the registry document', () => {
  it('classifies every operation of the document, and nothing else', () => {
    expect(DOCUMENT_OPERATIONS).toHaveLength(109)
    const ids = DOCUMENT_OPERATIONS.map((operation) => operation.operationId)
    const unclassified = ids.filter((id) => OPERATION_ACCESS[id] === undefined)
    expect(unclassified, 'classify these operations in auth/authorize.ts').toEqual([])
    expect(Object.keys(OPERATION_ACCESS).filter((id) => !ids.includes(id))).toEqual([])
    for (const id of ids) expect(IMPLEMENTED_OPERATIONS.has(id), id).toBe(true)
  })

  it('locks exactly the operations the document secures', () => {
    const mismatched = DOCUMENT_OPERATIONS.filter(
      (operation) => operation.secured !== lockedByDefault(OPERATION_ACCESS[operation.operationId]!),
    ).map((operation) => `${operation.operationId} (${OPERATION_ACCESS[operation.operationId]})`)
    expect(mismatched).toEqual([])
  })
})

describe('anonymous and badly credentialed callers', () => {
  const locked = DOCUMENT_OPERATIONS.filter((operation) =>
    lockedByDefault(OPERATION_ACCESS[operation.operationId]!),
  )

  it.each(locked.map((operation) => [operation.operationId, operation] as const))(
    '%s answers 401 with WWW-Authenticate',
    async (_, operation) => {
      const anonymous = await call(operation)
      expect([anonymous.status, anonymous.body?.error]).toEqual([401, 'unauthorized'])
      expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="[^"]+"$/)
      const wrong = await call(operation, 'sk_not-a-key-of-this-registry')
      expect([wrong.status, wrong.body?.error]).toEqual([401, 'invalid_token'])
      expect(wrong.headers.get('www-authenticate')).toMatch(/error="invalid_token"/)
    },
  )

  const open = DOCUMENT_OPERATIONS.filter(
    (operation) => !lockedByDefault(OPERATION_ACCESS[operation.operationId]!),
  )

  it.each(
    open.map(
      (operation, index) => [operation.operationId, operation, INVALID[index % INVALID.length]!] as const,
    ),
  )(
    '%s answers an invalid bearer 401 with WWW-Authenticate, never as an anonymous call',
    async (_, operation, bearer) => {
      const wrong = await call(operation, bearer)
      expect([wrong.status, wrong.body?.error]).toEqual([401, 'invalid_token'])
      expect(wrong.headers.get('www-authenticate')).toMatch(
        /^Bearer resource_metadata="[^"]+", error="invalid_token"$/,
      )
    },
  )

  it('serves a valid member key and the administrator bearer on the open operations', async () => {
    const sample = open.filter((operation) => operation.method === 'get').slice(0, 8)
    expect(sample.length).toBeGreaterThan(0)
    for (const operation of sample)
      for (const token of [orgA.apiKey, ADMIN_KEY]) {
        const answer = await call(operation, token)
        expect(answer.status, `${operation.operationId} ${JSON.stringify(answer.body)}`).not.toBe(401)
      }
  })
})

describe('administrator and moderator operations', () => {
  const roles = DOCUMENT_OPERATIONS.filter((operation) => {
    const access = OPERATION_ACCESS[operation.operationId]
    return access === 'admin' || access === 'moderator'
  })

  it.each(roles.map((operation) => [operation.operationId, operation] as const))(
    '%s answers 403 to a member key and changes nothing',
    async (_, operation) => {
      const digest = (await test.registry.repository.mirrors.getProposal(proposalId))!.proposal_digest
      const body =
        operation.operationId === 'approveCommunityMirrorProposal'
          ? { proposal_digest: digest }
          : operation.operationId === 'rejectCommunityMirrorProposal'
            ? { proposal_digest: digest, review_notes: 'no' }
            : undefined
      const path = concrete(operation).replace(UUID, proposalId).replace('a_platform', 'c_platform')
      const state = async () => ({
        proposal: (await test.registry.repository.mirrors.getProposal(proposalId))?.status,
        mirror: (await test.registry.repository.mirrors.getMirror('c_platform'))?.digest,
      })
      const before = await state()
      const answer = await api(test.registry, operation.operationId, path, {
        method: operation.method.toUpperCase(),
        token: orgA.apiKey,
        ...(body ? { body } : operation.raw.requestBody ? { body: {} } : {}),
      })
      expect(answer.status).toBe(403)
      expect(await state()).toEqual(before)
    },
  )
})

interface Scenario {
  /** B's attempt on A's resource. */
  attempt(b: string): Promise<ApiResult>
  /** A's resource, read as A (or from the store). */
  snapshot(): Promise<unknown>
}

const agentPath = (url: string, tail: string) => `/api/registry/agents/${enc(url)}${tail}`

/** What A sees of an agent: its monitoring settings (A controls `shared`), compliance, and A's listing. */
async function agentState(url: string): Promise<unknown> {
  const a = orgA.apiKey
  return {
    settings:
      url === shared
        ? (
            await api(test.registry, 'getAgentMonitoringSettings', agentPath(url, '/monitoring/settings'), {
              token: a,
            })
          ).body
        : undefined,
    compliance: (await api(test.registry, 'getAgentCompliance', agentPath(url, '/compliance'))).body,
    history: (await api(test.registry, 'getAgentComplianceHistory', agentPath(url, '/compliance/history')))
      .body,
    auth: (await api(test.registry, 'getAgentAuthStatus', agentPath(url, '/auth-status'), { token: a })).body,
    listing: (await api(test.registry, 'listMemberAgents', '/api/me/agents', { token: a })).body,
  }
}

const onAgent = (
  operationId: string,
  url: () => string,
  method: string,
  tail: string,
  body?: unknown,
): Scenario => ({
  attempt: (b) =>
    api(test.registry, operationId, agentPath(url(), tail), {
      method,
      token: b,
      ...(body !== undefined ? { body } : {}),
    }),
  snapshot: () => agentState(url()),
})

const SCENARIOS: Record<string, Scenario> = {
  listMemberAgents: {
    attempt: (b) => api(test.registry, 'listMemberAgents', `/api/me/agents?org=${orgA.id}`, { token: b }),
    snapshot: () => agentState(own),
  },
  getCommunityMirrorProposal: {
    attempt: (b) =>
      api(test.registry, 'getCommunityMirrorProposal', `/api/registry/mirror-proposals/${proposalId}`, {
        token: b,
      }),
    snapshot: async () => (await test.registry.repository.mirrors.getProposal(proposalId))?.status,
  },
  updateMemberAgent: {
    attempt: (b) =>
      api(test.registry, 'updateMemberAgent', `/api/me/agents/${enc(own)}`, {
        method: 'PATCH',
        token: b,
        body: { name: 'Hijacked' },
      }),
    snapshot: () => agentState(own),
  },
  removeMemberAgent: {
    attempt: (b) =>
      api(test.registry, 'removeMemberAgent', `/api/me/agents/${enc(own)}`, { method: 'DELETE', token: b }),
    snapshot: () => agentState(own),
  },
  saveBrand: {
    attempt: (b) =>
      api(test.registry, 'saveBrand', '/api/brands/save', {
        token: b,
        body: { domain: 'a-brand.test', brand_name: 'B' },
      }),
    snapshot: () => test.registry.repository.brands.getBrand('a-brand.test'),
  },
  setupMyBrand: {
    attempt: (b) =>
      api(test.registry, 'setupMyBrand', '/api/brands/setup-my-brand', {
        token: b,
        body: { domain: 'a-hosted.test', brand_name: 'B' },
      }),
    snapshot: async () => ({
      hosted: await test.registry.repository.hosting.getHostedDomain('a-hosted.test'),
      brand: await test.registry.repository.brands.getBrand('a-hosted.test'),
    }),
  },
  saveProperty: {
    attempt: (b) =>
      api(test.registry, 'saveProperty', '/api/properties/save', {
        token: b,
        body: { publisher_domain: 'a-property.test', properties: [{ type: 'website', name: 'B' }] },
      }),
    snapshot: async () =>
      (await api(test.registry, 'resolveProperty', '/api/properties/resolve?domain=a-property.test')).body,
  },
  savePolicy: {
    attempt: (b) =>
      api(test.registry, 'savePolicy', '/api/policies/save', { token: b, body: { ...POLICY, name: 'B' } }),
    snapshot: async () =>
      (await api(test.registry, 'resolvePolicy', '/api/policies/resolve?policy_id=a_policy')).body,
  },
  updateAgentLifecycle: onAgent('updateAgentLifecycle', () => shared, 'PUT', '/lifecycle', {
    lifecycle_stage: 'deprecated',
  }),
  updateAgentComplianceOptOut: onAgent(
    'updateAgentComplianceOptOut',
    () => shared,
    'PUT',
    '/compliance/opt-out',
    {
      opt_out: true,
    },
  ),
  getAgentMonitoringSettings: onAgent(
    'getAgentMonitoringSettings',
    () => shared,
    'GET',
    '/monitoring/settings',
  ),
  updateAgentMonitoringPause: onAgent(
    'updateAgentMonitoringPause',
    () => shared,
    'PUT',
    '/monitoring/pause',
    {
      paused: true,
    },
  ),
  updateAgentMonitoringInterval: onAgent(
    'updateAgentMonitoringInterval',
    () => shared,
    'PUT',
    '/monitoring/interval',
    {
      interval_hours: 48,
    },
  ),
  requeueAgentForHeartbeat: onAgent('requeueAgentForHeartbeat', () => shared, 'POST', '/monitoring/requeue'),
  getAgentMonitoringRequests: onAgent(
    'getAgentMonitoringRequests',
    () => shared,
    'GET',
    '/monitoring/requests',
  ),
  getAgentComplianceStepDiagnostics: onAgent(
    'getAgentComplianceStepDiagnostics',
    () => shared,
    'GET',
    '/compliance/diagnostics',
  ),
  refreshAgent: onAgent('refreshAgent', () => shared, 'POST', '/refresh', {}),
  connectAgent: onAgent('connectAgent', () => own, 'PUT', '/connect', { auth_token: 'b-token' }),
  saveAgentOAuthClientCredentials: onAgent(
    'saveAgentOAuthClientCredentials',
    () => own,
    'PUT',
    '/oauth-client-credentials',
    { token_endpoint: 'https://tokens.example/token', client_id: 'b', client_secret: 'b' },
  ),
  testAgentOAuthClientCredentials: onAgent(
    'testAgentOAuthClientCredentials',
    () => own,
    'POST',
    '/oauth-client-credentials/test',
  ),
  runStoryboard: onAgent('runStoryboard', () => own, 'POST', '/storyboard/capability_discovery/run', {}),
  runStoryboardStep: onAgent(
    'runStoryboardStep',
    () => own,
    'POST',
    '/storyboard/capability_discovery/step/x',
    {},
  ),
  compareStoryboard: onAgent(
    'compareStoryboard',
    () => own,
    'POST',
    '/storyboard/capability_discovery/compare',
    {},
  ),
  getApplicableStoryboards: onAgent('getApplicableStoryboards', () => own, 'GET', '/applicable-storyboards'),
}

const OWNED: ReadonlySet<AccessClass> = new Set([
  'org-owned-read',
  'org-owned-write',
  'agent-control',
  'agent-lister',
])

describe("organization B on organization A's resources", () => {
  const owned = DOCUMENT_OPERATIONS.filter((operation) => OWNED.has(OPERATION_ACCESS[operation.operationId]!))

  it('has a scenario for every organization-owned operation', () => {
    expect(owned.length).toBeGreaterThanOrEqual(20)
    expect(owned.map((operation) => operation.operationId).filter((id) => !SCENARIOS[id])).toEqual([])
  })

  it.each(
    owned.map((operation) => [operation.operationId, OPERATION_ACCESS[operation.operationId]] as const),
  )('%s (%s): 403 or 404, and A’s resource unchanged', async (operationId) => {
    const scenario = SCENARIOS[operationId]!
    const before = await scenario.snapshot()
    const answer = await scenario.attempt(orgB.apiKey)
    expect([403, 404], `${operationId} answered ${answer.status} ${JSON.stringify(answer.body)}`).toContain(
      answer.status,
    )
    expect(await scenario.snapshot()).toEqual(before)
  })
})
