import { createHash, randomBytes, randomUUID } from 'node:crypto'

/** The AdCP OAuth scopes a client may register for. */
export const ADCP_SCOPES = ['adcp:products', 'adcp:media_buys', 'adcp:creatives'] as const

/** A registered client (RFC 7591), as stored: the secret only as its SHA-256. */
export interface OAuthClient {
  readonly client_id: string
  readonly client_secret_sha256: string | null
  readonly client_name: string
  readonly redirect_uris: readonly string[]
  readonly grant_types: readonly string[]
  readonly scope: string
  readonly token_endpoint_auth_method: string
  readonly client_id_issued_at: number
}

/** Where registered clients are kept. */
export interface OAuthClientStore {
  save(client: OAuthClient): Promise<void>
  get(clientId: string): Promise<OAuthClient | undefined>
}

/** An in-memory {@link OAuthClientStore} for tests and examples. */
export class MemoryOAuthClientStore implements OAuthClientStore {
  readonly clients = new Map<string, OAuthClient>()
  async save(client: OAuthClient): Promise<void> {
    this.clients.set(client.client_id, client)
  }
  async get(clientId: string): Promise<OAuthClient | undefined> {
    return this.clients.get(clientId)
  }
}

export interface OAuthRegistrationOptions {
  readonly store?: OAuthClientStore
}

const GRANTS = ['authorization_code', 'refresh_token']
const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post']

function problem(error: string, description: string): Response {
  return Response.json({ error, error_description: description }, { status: 400 })
}

function redirectAllowed(value: unknown): boolean {
  if (typeof value !== 'string') return false
  try {
    const url = new URL(value)
    if (url.hash) return false
    if (url.protocol === 'https:') return true
    return url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
  } catch {
    return false
  }
}

/**
 * OAuth 2.0 dynamic client registration (RFC 7591) at `POST /oauth/register`: `client_name`, `redirect_uris`
 * (https, or http on loopback), `grant_types` within authorization_code and refresh_token, `scope` within
 * `adcp:products adcp:media_buys adcp:creatives`. Answers 201 with the client metadata and its credentials.
 *
 * @example
 * const register = createOAuthRegistration({ store: new MemoryOAuthClientStore() }, () => Date.now() / 1000)
 * const response = await register(request)
 */
export function createOAuthRegistration(
  options: OAuthRegistrationOptions,
  now: () => number,
): (request: Request) => Promise<Response> {
  const store = options.store ?? new MemoryOAuthClientStore()
  return async (request) => {
    if (request.method !== 'POST') return new Response(null, { status: 405, headers: { allow: 'POST' } })
    let body: Record<string, unknown>
    try {
      body = (await request.json()) as Record<string, unknown>
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new TypeError()
    } catch {
      return problem('invalid_client_metadata', 'the body must be a JSON object')
    }
    const redirects = body.redirect_uris
    if (!Array.isArray(redirects) || redirects.length === 0 || !redirects.every(redirectAllowed))
      return problem(
        'invalid_redirect_uri',
        'redirect_uris must be https URLs (or http on loopback) without fragments',
      )
    const clientName = body.client_name ?? 'unnamed client'
    if (typeof clientName !== 'string' || clientName.length > 200)
      return problem('invalid_client_metadata', 'client_name must be a string')
    const grants = body.grant_types ?? GRANTS
    if (
      !Array.isArray(grants) ||
      grants.length === 0 ||
      !grants.every((grant) => GRANTS.includes(grant as string))
    )
      return problem('invalid_client_metadata', `grant_types must be within ${GRANTS.join(', ')}`)
    const scope = body.scope ?? ADCP_SCOPES.join(' ')
    const scopes = typeof scope === 'string' ? scope.split(' ').filter(Boolean) : []
    if (scopes.length === 0 || !scopes.every((item) => (ADCP_SCOPES as readonly string[]).includes(item)))
      return problem('invalid_client_metadata', `scope must be within ${ADCP_SCOPES.join(' ')}`)
    const method = body.token_endpoint_auth_method ?? 'client_secret_basic'
    if (typeof method !== 'string' || !AUTH_METHODS.includes(method))
      return problem(
        'invalid_client_metadata',
        `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}`,
      )
    const secret = method === 'none' ? null : randomBytes(32).toString('base64url')
    const client: OAuthClient = {
      client_id: randomUUID(),
      client_secret_sha256: secret ? createHash('sha256').update(secret).digest('hex') : null,
      client_name: clientName,
      redirect_uris: redirects as string[],
      grant_types: grants as string[],
      scope: scopes.join(' '),
      token_endpoint_auth_method: method,
      client_id_issued_at: Math.floor(now()),
    }
    await store.save(client)
    const { client_secret_sha256: _hash, ...metadata } = client
    return Response.json(
      {
        ...metadata,
        ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
        response_types: ['code'],
      },
      { status: 201, headers: { 'cache-control': 'no-store' } },
    )
  }
}
