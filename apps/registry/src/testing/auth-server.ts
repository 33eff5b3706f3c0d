/** Test helpers for the auth module: a real HTTP server on 127.0.0.1 and the steps of an OAuth client. */
import { createHash, randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { getRequestListener } from '@hono/node-server'
import { Hono } from 'hono'
import { createAuth, type Auth, type AuthStore } from '../auth/index.js'

export interface AuthServer {
  url: string
  auth: Auth
  /** The test clock, epoch milliseconds; tests move it forward. */
  clock: { now: number }
  close(): Promise<void>
}

/**
 * Serves the auth routes plus `GET /api/whoami` (401 without a valid credential) on 127.0.0.1, port 0.
 */
export async function startAuthServer(store: AuthStore): Promise<AuthServer> {
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const clock = { now: Date.now() }
  const auth = createAuth(store, { issuer: url, now: () => clock.now })
  const app = new Hono()
  app.route('/', auth.routes)
  app.get('/api/whoami', async (c) => {
    const principal = await auth.authenticate(c.req.raw)
    return principal ? c.json(principal) : c.json({ error: 'sign in', code: 'unauthorized' }, 401)
  })
  server.on('request', getRequestListener(app.fetch))
  return {
    url,
    auth,
    clock,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}

/** A PKCE pair: a 43-character verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

export const REDIRECT_URI = 'http://127.0.0.1:9/callback'

/** Registers a client with RFC 7591 and returns the response body. */
export async function registerClient(
  url: string,
  metadata: Record<string, unknown> = { redirect_uris: [REDIRECT_URI], client_name: 'Test app' },
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(metadata),
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

/** Submits the consent form; returns the status and the redirect target, when any. */
export async function submitConsent(
  url: string,
  fields: Record<string, string>,
): Promise<{ status: number; location: URL | undefined; text: string }> {
  const response = await fetch(`${url}/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  })
  const location = response.headers.get('location')
  return {
    status: response.status,
    location: location ? new URL(location) : undefined,
    text: await response.text(),
  }
}

/** Calls the token endpoint with form fields. */
export async function token(
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

/** Runs registration and consent; resolves to the client id, the code and the PKCE verifier. */
export async function authorize(
  server: AuthServer,
  apiKey: string,
  email = 'ana@example.com',
): Promise<{ clientId: string; code: string; verifier: string }> {
  const { body } = await registerClient(server.url)
  const clientId = body.client_id as string
  const { verifier, challenge } = pkcePair()
  const consent = await submitConsent(server.url, {
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'xyz',
    email,
    api_key: apiKey,
    decision: 'approve',
  })
  const code = consent.location?.searchParams.get('code')
  if (!code) throw new Error(`consent did not redirect with a code: ${consent.status} ${consent.text}`)
  return { clientId, code, verifier }
}

/** GET /api/whoami with a bearer credential. */
export async function whoami(url: string, credential?: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${url}/api/whoami`, {
    headers: credential ? { authorization: `Bearer ${credential}` } : {},
  })
  return { status: response.status, body: await response.json() }
}
