/**
 * The OAuth 2.1 authorization server's HTTP endpoints: RFC 8414 and RFC 9728 metadata, the JWKS, RFC 7591
 * dynamic client registration, the authorization endpoint (sign-in and consent page) and the token endpoint.
 * Errors follow RFC 6749 (`{ error, error_description }`), which OAuth clients expect, not the registry's
 * `{ error: message, code }`.
 */
import { Hono, type Context } from 'hono'
import { findClient, registerClient, RegistrationError, AUTH_METHODS, type OAuthClient } from './clients.js'
import { consentPage, errorPage } from './consent-page.js'
import type { AuthDb } from './db.js'
import {
  createCode,
  GrantError,
  jwks,
  redeemCode,
  rotateRefreshToken,
  SUPPORTED_SCOPES,
  type IssuerSettings,
} from './grants.js'
import { orgForApiKey, upsertUser } from './identities.js'
import { isS256Challenge, sha256Hex } from './secrets.js'

export interface RouteContext {
  db: AuthDb
  settings: () => Promise<IssuerSettings>
  issuer: string
  audience: string
  now: () => number
}

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' }
const PAGE_HEADERS = {
  ...NO_STORE,
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
}

/** Builds the Hono app serving the authorization server; the registry mounts it at `/`. */
export function authRoutes(ctx: RouteContext): Hono {
  const app = new Hono()
  const { issuer, audience } = ctx

  app.get('/.well-known/oauth-authorization-server', (c) =>
    c.json({
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      registration_endpoint: `${issuer}/register`,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: [...AUTH_METHODS],
      scopes_supported: [...SUPPORTED_SCOPES],
      authorization_response_iss_parameter_supported: true,
    }),
  )

  app.get('/.well-known/oauth-protected-resource/api', (c) =>
    c.json({
      resource: audience,
      authorization_servers: [issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: [...SUPPORTED_SCOPES],
    }),
  )

  app.get('/.well-known/jwks.json', async (c) => c.json(jwks((await ctx.settings()).key)))

  app.post('/register', async (c) => {
    let body: unknown
    try {
      body = await c.req.json()
    } catch {
      return c.json({ error: 'invalid_client_metadata', error_description: 'the body must be JSON' }, 400)
    }
    try {
      const registered = await registerClient(ctx.db, body, ctx.now())
      return c.json(
        {
          client_id: registered.client.clientId,
          client_id_issued_at: Math.floor(ctx.now() / 1000),
          ...(registered.clientSecret
            ? { client_secret: registered.clientSecret, client_secret_expires_at: 0 }
            : {}),
          ...registered.metadata,
        },
        201,
        NO_STORE,
      )
    } catch (error) {
      if (error instanceof RegistrationError) {
        return c.json({ error: error.code, error_description: error.message }, 400)
      }
      throw error
    }
  })

  app.get('/authorize', async (c) => {
    const request = await authorizationRequest(ctx, new URL(c.req.url).searchParams)
    if (request.kind !== 'ok') return respond(c, request)
    return c.html(consentPage(request.view), 200, PAGE_HEADERS)
  })

  app.post('/authorize', async (c) => {
    const form = await formParams(c)
    if (!form) return c.html(errorPage('The form must be sent as application/x-www-form-urlencoded.'), 400)
    const request = await authorizationRequest(ctx, form)
    if (request.kind !== 'ok') return respond(c, request)
    if (form.get('decision') !== 'approve') {
      return c.redirect(
        errorRedirect(
          request.redirectUri,
          request.state,
          issuer,
          'access_denied',
          'the user denied the request',
        ),
        302,
      )
    }
    const email = (form.get('email') ?? '').trim()
    const org = await orgForApiKey(ctx.db, (form.get('api_key') ?? '').trim())
    if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 254 || !org) {
      const error = org ? 'Enter a valid email address.' : 'That organization API key is not valid.'
      return c.html(consentPage({ ...request.view, email, error }), 401, PAGE_HEADERS)
    }
    const now = ctx.now()
    const userId = await upsertUser(ctx.db, email, org.id, now)
    const code = await createCode(
      ctx.db,
      {
        clientId: request.client.clientId,
        userId,
        redirectUri: request.redirectUri,
        codeChallenge: request.codeChallenge,
        scope: request.scope,
      },
      now,
    )
    const target = new URL(request.redirectUri)
    target.searchParams.set('code', code)
    if (request.state !== undefined) target.searchParams.set('state', request.state)
    target.searchParams.set('iss', issuer)
    return c.redirect(target.toString(), 302)
  })

  app.post('/token', async (c) => {
    const form = await formParams(c)
    if (!form) return tokenError(c, 'invalid_request', 'the body must be application/x-www-form-urlencoded')
    const client = await authenticateClient(ctx.db, c.req.header('authorization'), form)
    if (typeof client === 'string') {
      return c.json({ error: 'invalid_client', error_description: client }, 401, {
        ...NO_STORE,
        'WWW-Authenticate': 'Basic realm="token"',
      })
    }
    try {
      const settings = await ctx.settings()
      const grantType = form.get('grant_type')
      if (grantType === 'authorization_code') {
        const code = form.get('code')
        if (!code) return tokenError(c, 'invalid_request', 'code is required')
        const tokens = await redeemCode(
          ctx.db,
          settings,
          {
            code,
            clientId: client.clientId,
            redirectUri: form.get('redirect_uri') ?? undefined,
            codeVerifier: form.get('code_verifier') ?? undefined,
          },
          ctx.now(),
        )
        return c.json(tokens, 200, NO_STORE)
      }
      if (grantType === 'refresh_token') {
        const refreshToken = form.get('refresh_token')
        if (!refreshToken) return tokenError(c, 'invalid_request', 'refresh_token is required')
        const tokens = await rotateRefreshToken(
          ctx.db,
          settings,
          { refreshToken, clientId: client.clientId, scope: form.get('scope') ?? undefined },
          ctx.now(),
        )
        return c.json(tokens, 200, NO_STORE)
      }
      return tokenError(c, 'unsupported_grant_type', 'grant_type must be authorization_code or refresh_token')
    } catch (error) {
      if (error instanceof GrantError) return tokenError(c, error.code, error.message)
      throw error
    }
  })

  return app
}

function tokenError(c: Context, error: string, description: string): Response {
  return c.json({ error, error_description: description }, 400, NO_STORE)
}

async function formParams(c: Context): Promise<URLSearchParams | undefined> {
  const type = c.req.header('content-type') ?? ''
  if (!type.toLowerCase().startsWith('application/x-www-form-urlencoded')) return undefined
  return new URLSearchParams(await c.req.text())
}

/** Authenticates the client at the token endpoint; a string is the reason it failed. */
async function authenticateClient(
  db: AuthDb,
  authorization: string | undefined,
  form: URLSearchParams,
): Promise<OAuthClient | string> {
  let clientId = form.get('client_id') ?? undefined
  let secret = form.get('client_secret') ?? undefined
  let method: string = secret === undefined ? 'none' : 'client_secret_post'
  if (authorization?.toLowerCase().startsWith('basic ')) {
    const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon < 0) return 'malformed Basic credentials'
    clientId = decodeURIComponent(decoded.slice(0, colon))
    secret = decodeURIComponent(decoded.slice(colon + 1))
    method = 'client_secret_basic'
  }
  if (!clientId) return 'client_id is required'
  const client = await findClient(db, clientId)
  if (!client) return 'unknown client'
  if (client.tokenEndpointAuthMethod !== method) {
    return `this client authenticates with ${client.tokenEndpointAuthMethod}`
  }
  if (method !== 'none' && (!secret || sha256Hex(secret) !== client.clientSecretHash)) {
    return 'wrong client secret'
  }
  return client
}

type AuthorizationRequest =
  | {
      kind: 'ok'
      client: OAuthClient
      redirectUri: string
      state: string | undefined
      codeChallenge: string
      scope: string
      view: Parameters<typeof consentPage>[0]
    }
  | { kind: 'page'; message: string }
  | { kind: 'redirect'; location: string }

function respond(c: Context, request: Exclude<AuthorizationRequest, { kind: 'ok' }>): Response {
  if (request.kind === 'page') return c.html(errorPage(request.message), 400, PAGE_HEADERS)
  return c.redirect(request.location, 302)
}

function errorRedirect(
  redirectUri: string,
  state: string | undefined,
  issuer: string,
  error: string,
  description: string,
): string {
  const target = new URL(redirectUri)
  target.searchParams.set('error', error)
  target.searchParams.set('error_description', description)
  if (state !== undefined) target.searchParams.set('state', state)
  target.searchParams.set('iss', issuer)
  return target.toString()
}

/** Validates the authorization request parameters (query on GET, hidden form fields on POST). */
async function authorizationRequest(
  ctx: RouteContext,
  params: URLSearchParams,
): Promise<AuthorizationRequest> {
  const clientId = params.get('client_id')
  const client = clientId ? await findClient(ctx.db, clientId) : undefined
  if (!client) return { kind: 'page', message: 'Unknown or missing client_id.' }
  const requestedUri = params.get('redirect_uri')
  let redirectUri: string | undefined
  if (requestedUri === null) {
    if (client.redirectUris.length === 1) redirectUri = client.redirectUris[0]
  } else if (client.redirectUris.includes(requestedUri)) {
    redirectUri = requestedUri
  }
  if (!redirectUri)
    return { kind: 'page', message: 'The redirect_uri is missing or not registered for this client.' }
  const state = params.get('state') ?? undefined
  const fail = (error: string, description: string): AuthorizationRequest => ({
    kind: 'redirect',
    location: errorRedirect(redirectUri, state, ctx.issuer, error, description),
  })
  if (params.get('response_type') !== 'code')
    return fail('unsupported_response_type', 'response_type must be code')
  const codeChallenge = params.get('code_challenge') ?? ''
  if (params.get('code_challenge_method') !== 'S256' || !isS256Challenge(codeChallenge)) {
    return fail('invalid_request', 'PKCE is required: code_challenge with code_challenge_method=S256')
  }
  const requestedScope = (params.get('scope') ?? '').split(' ').filter(Boolean)
  const unknown = requestedScope.filter((scope) => !(SUPPORTED_SCOPES as readonly string[]).includes(scope))
  if (unknown.length > 0) return fail('invalid_scope', `unsupported scope: ${unknown.join(' ')}`)
  const scope = (requestedScope.length > 0 ? requestedScope : [...SUPPORTED_SCOPES]).join(' ')
  const resource = params.get('resource')
  if (resource !== null && resource !== ctx.audience) {
    return fail('invalid_target', `the only resource served here is ${ctx.audience}`)
  }
  const hidden: Record<string, string> = {
    client_id: client.clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    code_challenge: codeChallenge,
    code_challenge_method: 'S256',
    scope,
  }
  if (state !== undefined) hidden.state = state
  if (resource !== null) hidden.resource = resource
  return {
    kind: 'ok',
    client,
    redirectUri,
    state,
    codeChallenge,
    scope,
    view: {
      clientName: client.clientName ?? client.clientId,
      clientId: client.clientId,
      redirectUri,
      scope,
      hidden,
    },
  }
}
