/**
 * Agent Compliance, credentials: what the caller's organization has saved for an agent (`getAgentAuthStatus`),
 * a bearer or basic token (`connectAgent`), OAuth client credentials (`saveAgentOAuthClientCredentials`,
 * validated by `domain/client-credentials.ts`) and their live test (`testAgentOAuthClientCredentials`).
 * Credentials are sealed at rest; without a sealing key these answer 500 `credentials_unavailable`.
 */
import { Hono } from 'hono'
import { testClientCredentials } from '../compliance/credentials.js'
import { MONITOR_USER_AGENT } from '../compliance/monitoring.js'
import { iso } from '../compliance/status-store.js'
import { authorizeAgentLister } from '../auth/authorize.js'
import type { RegistryDeps } from '../deps.js'
import { clientCredentialsOf, CredentialFieldError } from '../domain/client-credentials.js'
import { AGENT_BASE, agentOf, credentialsOf, optionalBody, sealing, serviceOf } from './compliance-context.js'
import type { RequestBody, ResponseBody } from './contract-types.js'
import { HttpError, MAX_BODY_BYTES, readBody, reply, requirePrincipal } from './http.js'

type Agent = '/api/registry/agents/{encodedUrl}'

/** A `CredentialSaveValidationError`. */
const credentialError = (error: CredentialFieldError) =>
  new HttpError(400, error.code, error.message, { code: error.code, field: error.field })

/**
 * The credential routes.
 *
 * @example
 * app.route('/', complianceCredentialRoutes(deps))
 */
export function complianceCredentialRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()

  app.get(`${AGENT_BASE}/auth-status`, async (c) => {
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
    const body: ResponseBody<`${Agent}/auth-status`, 'get'> = {
      has_auth: hasAuth,
      agent_context_id: status?.agentContextId ?? null,
      auth_type: hasAuth ? status!.authType : null,
      has_oauth_token: false,
      has_valid_oauth: false,
      oauth_token_expires_at: null,
      has_oauth_client_credentials: status?.hasClientCredentials ?? false,
    }
    return reply(c, deps, 'getAgentAuthStatus', body)
  })

  app.put(`${AGENT_BASE}/connect`, async (c) => {
    await requirePrincipal(c, deps)
    const agentUrl = agentOf(c)
    const body = await readBody<RequestBody<`${Agent}/connect`, 'put'>>(c, 'connectAgent')
    if (body.auth_token !== undefined && body.auth_token.trim() === '') {
      throw new HttpError(400, 'invalid_parameter', 'auth_token is empty', {
        details: { field: 'auth_token' },
      })
    }
    const orgId = await authorizeAgentLister(c, deps, agentUrl, body.organization_id)
    const store = credentialsOf(deps)
    const now = deps.now()
    const token = body.auth_token
    const saved = await sealing(() =>
      token === undefined
        ? store.ensureContext(orgId, agentUrl, now)
        : store.saveToken(orgId, agentUrl, { type: body.auth_type ?? 'bearer', value: token }, now),
    )
    const status = await store.status(orgId, agentUrl)
    const answer: ResponseBody<`${Agent}/connect`, 'put'> = {
      connected: true,
      has_auth: status !== undefined && (status.hasToken || status.hasClientCredentials),
      agent_context_id: saved.agentContextId,
    }
    return reply(c, deps, 'connectAgent', answer)
  })

  app.put(`${AGENT_BASE}/oauth-client-credentials`, async (c) => {
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
      throw credentialError(
        new CredentialFieldError(
          'invalid_blob_shape',
          'oauth_client_credentials',
          'the body is not valid JSON',
        ),
      )
    }
    const service = serviceOf(deps)
    let config
    try {
      config = clientCredentialsOf(body, service.allowPrivate)
    } catch (error) {
      throw error instanceof CredentialFieldError ? credentialError(error) : error
    }
    const organizationId = (body as RequestBody<`${Agent}/oauth-client-credentials`, 'put'>).organization_id
    const orgId = await authorizeAgentLister(c, deps, agentUrl, organizationId)
    const store = credentialsOf(deps)
    const saved = await sealing(() => store.saveClientCredentials(orgId, agentUrl, config, deps.now()))
    const answer: ResponseBody<`${Agent}/oauth-client-credentials`, 'put'> = {
      connected: true,
      has_auth: true,
      agent_context_id: saved.agentContextId,
      auth_type: 'oauth_client_credentials',
    }
    return reply(c, deps, 'saveAgentOAuthClientCredentials', answer)
  })

  app.post(`${AGENT_BASE}/oauth-client-credentials/test`, async (c) => {
    await requirePrincipal(c, deps)
    const agentUrl = agentOf(c)
    const body = await optionalBody<RequestBody<`${Agent}/oauth-client-credentials/test`, 'post'>>(
      c,
      'testAgentOAuthClientCredentials',
    )
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
