/** OAuth clients registered dynamically (RFC 7591). */
import type { AuthDb } from './db.js'
import { randomToken, sha256Hex } from './secrets.js'

export const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const
export type TokenEndpointAuthMethod = (typeof AUTH_METHODS)[number]

export interface OAuthClient {
  clientId: string
  clientName?: string
  redirectUris: string[]
  tokenEndpointAuthMethod: TokenEndpointAuthMethod
  clientSecretHash?: string
}

/** An RFC 7591 error: `invalid_redirect_uri` or `invalid_client_metadata`. */
export class RegistrationError extends Error {
  constructor(
    readonly code: 'invalid_redirect_uri' | 'invalid_client_metadata',
    message: string,
  ) {
    super(message)
  }
}

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost'])

/**
 * Whether a redirect URI is acceptable (OAuth 2.1 §2.3.1 and §8.4.2): absolute, no fragment, `https`, or `http`
 * on a loopback host, or a private-use scheme containing a dot (native apps, e.g. `com.example.app:/cb`).
 */
export function redirectUriProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 2000)
    return 'a redirect URI is a string of at most 2000 characters'
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return `${value} is not an absolute URI`
  }
  if (url.hash || value.includes('#')) return `${value} has a fragment`
  if (url.protocol === 'https:') return undefined
  if (url.protocol === 'http:')
    return LOOPBACK.has(url.hostname) ? undefined : `${value} uses http on a non-loopback host`
  if (/^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/i.test(url.protocol)) return undefined
  return `${value} uses the scheme ${url.protocol} (use https, http on loopback, or a reverse-domain scheme)`
}

export interface RegisteredClient {
  client: OAuthClient
  /** Only for confidential clients; shown once. */
  clientSecret?: string
  /** The client metadata echoed back by the registration response. */
  metadata: Record<string, unknown>
}

/** Validates RFC 7591 client metadata and stores the client. */
export async function registerClient(db: AuthDb, body: unknown, now: number): Promise<RegisteredClient> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new RegistrationError(
      'invalid_client_metadata',
      'the body must be a JSON object of client metadata',
    )
  }
  const input = body as Record<string, unknown>
  const redirectUris = input.redirect_uris
  if (!Array.isArray(redirectUris) || redirectUris.length === 0 || redirectUris.length > 10) {
    throw new RegistrationError('invalid_redirect_uri', 'redirect_uris must list 1 to 10 redirect URIs')
  }
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri)
    if (problem) throw new RegistrationError('invalid_redirect_uri', problem)
  }
  const method = input.token_endpoint_auth_method ?? 'none'
  if (!AUTH_METHODS.includes(method as TokenEndpointAuthMethod)) {
    throw new RegistrationError(
      'invalid_client_metadata',
      `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}`,
    )
  }
  const grantTypes = input.grant_types ?? ['authorization_code', 'refresh_token']
  if (
    !Array.isArray(grantTypes) ||
    grantTypes.some((grant) => grant !== 'authorization_code' && grant !== 'refresh_token')
  ) {
    throw new RegistrationError(
      'invalid_client_metadata',
      'grant_types may only contain authorization_code and refresh_token',
    )
  }
  const responseTypes = input.response_types ?? ['code']
  if (!Array.isArray(responseTypes) || responseTypes.some((type) => type !== 'code')) {
    throw new RegistrationError('invalid_client_metadata', 'response_types may only contain code')
  }
  const clientName = input.client_name
  if (clientName !== undefined && (typeof clientName !== 'string' || clientName.length > 200)) {
    throw new RegistrationError(
      'invalid_client_metadata',
      'client_name must be a string of at most 200 characters',
    )
  }
  const clientId = `cli_${randomToken(16)}`
  const clientSecret = method === 'none' ? undefined : `cs_${randomToken(32)}`
  const metadata: Record<string, unknown> = {
    redirect_uris: redirectUris,
    token_endpoint_auth_method: method,
    grant_types: grantTypes,
    response_types: responseTypes,
    ...(clientName !== undefined ? { client_name: clientName } : {}),
  }
  await db.run(
    `INSERT INTO {clients} (client_id, client_secret_hash, token_endpoint_auth_method, client_name,
       redirect_uris, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    [
      clientId,
      clientSecret ? sha256Hex(clientSecret) : null,
      method as string,
      (clientName as string | undefined) ?? null,
      JSON.stringify(redirectUris),
      JSON.stringify(metadata),
      now,
    ],
  )
  return {
    client: {
      clientId,
      redirectUris: redirectUris as string[],
      tokenEndpointAuthMethod: method as TokenEndpointAuthMethod,
      ...(clientName !== undefined ? { clientName: clientName as string } : {}),
      ...(clientSecret ? { clientSecretHash: sha256Hex(clientSecret) } : {}),
    },
    ...(clientSecret ? { clientSecret } : {}),
    metadata,
  }
}

interface ClientRow {
  client_id: string
  client_secret_hash: string | null
  token_endpoint_auth_method: string
  client_name: string | null
  redirect_uris: string
}

/** A registered client, or `undefined`. */
export async function findClient(db: AuthDb, clientId: string): Promise<OAuthClient | undefined> {
  const row = await db.one<ClientRow>(
    `SELECT client_id, client_secret_hash, token_endpoint_auth_method, client_name, redirect_uris
     FROM {clients} WHERE client_id = ?`,
    [clientId],
  )
  if (!row) return undefined
  return {
    clientId: row.client_id,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    tokenEndpointAuthMethod: row.token_endpoint_auth_method as TokenEndpointAuthMethod,
    ...(row.client_name ? { clientName: row.client_name } : {}),
    ...(row.client_secret_hash ? { clientSecretHash: row.client_secret_hash } : {}),
  }
}
