/**
 * Agent credentials the registry presents when it runs storyboards against an agent: a bearer/basic token
 * (`PUT …/connect`) and an OAuth 2.0 client-credentials configuration (`PUT …/oauth-client-credentials`), one
 * context per (organization, agent). Secrets are sealed with AES-256-GCM before they reach the database
 * (`AGENT_CREDENTIALS_KEY`: one or more base64 32-byte keys, the first seals, all open — rotation), each box
 * bound to its organization, agent and field as additional data so a box cannot be moved to another row.
 * `testClientCredentials` performs a real RFC 6749 §4.4 exchange at the token endpoint.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes, randomUUID } from 'node:crypto'
import type { SqlDriver } from '@adwire/sql'
import { canonicalAgentUrl } from '../domain/names.js'
import type { AgentCredential, AgentCredentialSource } from './contract.js'

/** Thrown when a credential must be sealed or opened and no key is configured (or none fits). */
export class CredentialsUnavailableError extends Error {
  override readonly name = 'CredentialsUnavailableError'
}

/** A sealing key and its short id (the first 8 hex digits of its SHA-256). */
interface Key {
  readonly id: string
  readonly bytes: Buffer
}

/**
 * Parses `AGENT_CREDENTIALS_KEY`: comma-separated base64 (or base64url) values of exactly 32 bytes. Throws a
 * message naming the problem (env.ts reports it as an environment error).
 */
export function parseCredentialKeys(value: string): Buffer[] {
  return value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part, index) => {
      if (!/^[A-Za-z0-9+/_-]+=*$/.test(part)) throw new Error(`key ${index + 1} is not base64`)
      const bytes = Buffer.from(part.replaceAll('-', '+').replaceAll('_', '/'), 'base64')
      if (bytes.length !== 32) throw new Error(`key ${index + 1} is ${bytes.length} bytes, not 32`)
      return bytes
    })
}

/** Seals and opens secrets with AES-256-GCM. */
export interface SecretBox {
  readonly available: boolean
  seal(plain: string, context: string): string
  open(box: string, context: string): string
}

export function createSecretBox(keys: readonly Buffer[]): SecretBox {
  const ring: Key[] = keys.map((bytes) => ({
    id: createHash('sha256').update(bytes).digest('hex').slice(0, 8),
    bytes,
  }))
  return {
    available: ring.length > 0,
    seal(plain, context) {
      const key = ring[0]
      if (!key)
        throw new CredentialsUnavailableError(
          'AGENT_CREDENTIALS_KEY is not set: agent credentials cannot be stored',
        )
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key.bytes, iv)
      cipher.setAAD(Buffer.from(context, 'utf8'))
      const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
      return [
        'v1',
        key.id,
        iv.toString('base64url'),
        sealed.toString('base64url'),
        cipher.getAuthTag().toString('base64url'),
      ].join('.')
    },
    open(box, context) {
      const [version, keyId, iv, sealed, tag] = box.split('.')
      const key = ring.find((candidate) => candidate.id === keyId)
      if (version !== 'v1' || !iv || sealed === undefined || !tag)
        throw new CredentialsUnavailableError('a stored credential is malformed')
      if (!key)
        throw new CredentialsUnavailableError(
          `a stored credential was sealed with key ${keyId}, which is not configured`,
        )
      const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(iv, 'base64url'))
      decipher.setAAD(Buffer.from(context, 'utf8'))
      decipher.setAuthTag(Buffer.from(tag, 'base64url'))
      try {
        return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString(
          'utf8',
        )
      } catch {
        throw new CredentialsUnavailableError('a stored credential does not open with the configured key')
      }
    },
  }
}

/** A saved client-credentials configuration (secret values as written: `$ENV:NAME` references stay references). */
export interface ClientCredentialsConfig {
  readonly token_endpoint: string
  readonly client_id: string
  readonly client_secret: string
  readonly scope?: string
  readonly resource?: string | string[]
  readonly audience?: string
  readonly auth_method?: 'basic' | 'body'
}

export interface CredentialStatus {
  readonly agentContextId: string
  readonly authType: 'bearer' | 'basic' | 'oauth_client_credentials'
  readonly hasToken: boolean
  readonly hasClientCredentials: boolean
}

export interface AgentCredentialStore extends AgentCredentialSource {
  readonly available: boolean
  saveToken(
    orgId: string,
    agentUrl: string,
    token: { type: 'bearer' | 'basic'; value: string },
    now: number,
  ): Promise<{ agentContextId: string }>
  saveClientCredentials(
    orgId: string,
    agentUrl: string,
    config: ClientCredentialsConfig,
    now: number,
  ): Promise<{ agentContextId: string }>
  /** The (organization, agent) context, created without credentials when there is none. */
  ensureContext(orgId: string, agentUrl: string, now: number): Promise<{ agentContextId: string }>
  status(orgId: string, agentUrl: string): Promise<CredentialStatus | undefined>
  clientCredentials(orgId: string, agentUrl: string): Promise<ClientCredentialsConfig | undefined>
}

interface CredentialRow {
  org_id: string
  agent_url_canonical: string
  agent_context_id: string
  auth_type: CredentialStatus['authType']
  token_box: string | null
  client_credentials_box: string | null
}

const context = (orgId: string, canonical: string, field: string) => `${orgId}\n${canonical}\n${field}`

/** The credential store on the repository's driver. */
export function agentCredentialStore(db: SqlDriver, box: SecretBox): AgentCredentialStore {
  const iso = (ms: number) => new Date(ms).toISOString()
  const row = (orgId: string, canonical: string) =>
    db.one<CredentialRow>(
      `SELECT org_id, agent_url_canonical, agent_context_id, auth_type, token_box, client_credentials_box
       FROM registry_agent_credentials WHERE org_id = ? AND agent_url_canonical = ?`,
      [orgId, canonical],
    )
  const save = async (
    orgId: string,
    agentUrl: string,
    authType: CredentialStatus['authType'],
    field: 'token_box' | 'client_credentials_box',
    plain: string,
    now: number,
  ) => {
    const canonical = canonicalAgentUrl(agentUrl)
    const sealed = box.seal(plain, context(orgId, canonical, field))
    return db.transaction(async (tx) => {
      const existing = await tx.one<{ agent_context_id: string }>(
        `SELECT agent_context_id FROM registry_agent_credentials WHERE org_id = ? AND agent_url_canonical = ?`,
        [orgId, canonical],
      )
      const agentContextId = existing?.agent_context_id ?? randomUUID()
      if (existing) {
        await tx.run(
          `UPDATE registry_agent_credentials SET auth_type = ?, ${field} = ?, agent_url = ?, updated_at = ?
           WHERE org_id = ? AND agent_url_canonical = ?`,
          [authType, sealed, agentUrl, iso(now), orgId, canonical],
        )
      } else {
        await tx.run(
          `INSERT INTO registry_agent_credentials (org_id, agent_url_canonical, agent_url, agent_context_id, auth_type,
             ${field}, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
          [orgId, canonical, agentUrl, agentContextId, authType, sealed, iso(now), iso(now)],
        )
      }
      return { agentContextId }
    })
  }
  const openClientCredentials = (found: CredentialRow) =>
    JSON.parse(
      box.open(
        found.client_credentials_box!,
        context(found.org_id, found.agent_url_canonical, 'client_credentials_box'),
      ),
    ) as ClientCredentialsConfig
  return {
    available: box.available,
    saveToken: (orgId, agentUrl, token, now) =>
      save(orgId, agentUrl, token.type, 'token_box', JSON.stringify(token), now),
    saveClientCredentials: (orgId, agentUrl, config, now) =>
      save(
        orgId,
        agentUrl,
        'oauth_client_credentials',
        'client_credentials_box',
        JSON.stringify(config),
        now,
      ),
    async ensureContext(orgId, agentUrl, now) {
      const canonical = canonicalAgentUrl(agentUrl)
      await db.run(
        `INSERT INTO registry_agent_credentials (org_id, agent_url_canonical, agent_url, agent_context_id, auth_type,
           created_at, updated_at) VALUES (?, ?, ?, ?, 'bearer', ?, ?)
         ON CONFLICT (org_id, agent_url_canonical) DO NOTHING`,
        [orgId, canonical, agentUrl, randomUUID(), iso(now), iso(now)],
      )
      const found = await row(orgId, canonical)
      return { agentContextId: found!.agent_context_id }
    },
    async status(orgId, agentUrl) {
      const found = await row(orgId, canonicalAgentUrl(agentUrl))
      return (
        found && {
          agentContextId: found.agent_context_id,
          authType: found.auth_type,
          hasToken: found.token_box !== null,
          hasClientCredentials: found.client_credentials_box !== null,
        }
      )
    },
    async clientCredentials(orgId, agentUrl) {
      const found = await row(orgId, canonicalAgentUrl(agentUrl))
      return found?.client_credentials_box ? openClientCredentials(found) : undefined
    },
    /**
     * The credential `orgId` saved for this agent (its current `auth_type` decides which); none without an
     * organization — the registry's heartbeats ask through `controllerCredentials` (auth/authorize.ts), which names
     * the agent's controller. A `basic` token has no `AgentCredential` form and gives none.
     */
    async credentialFor(agentUrl, orgId): Promise<AgentCredential | undefined> {
      if (orgId === undefined) return undefined
      const found = await row(orgId, canonicalAgentUrl(agentUrl))
      if (!found) return undefined
      if (found.auth_type === 'oauth_client_credentials' && found.client_credentials_box) {
        const config = openClientCredentials(found)
        return {
          type: 'oauth_client_credentials',
          tokenEndpoint: config.token_endpoint,
          clientId: config.client_id,
          clientSecret: config.client_secret,
          ...(config.scope ? { scope: config.scope } : {}),
        }
      }
      if (found.auth_type === 'bearer' && found.token_box) {
        const token = JSON.parse(
          box.open(found.token_box, context(found.org_id, found.agent_url_canonical, 'token_box')),
        ) as { value: string }
        return { type: 'bearer', token: token.value }
      }
      return undefined
    },
  }
}

/** The answer of `testAgentOAuthClientCredentials`. */
export type TokenTestResult =
  | { ok: true; latency_ms: number }
  | {
      ok: false
      latency_ms: number
      error: {
        kind: 'oauth' | 'malformed' | 'network'
        message: string
        oauth_error?: string
        oauth_error_description?: string
        http_status?: number
      }
    }

const ENV_REFERENCE = /^\$ENV:/

/**
 * Exchanges the configuration at its token endpoint (grant `client_credentials`), discarding the token. The
 * registry does not resolve `$ENV:` references from its own environment (that would let a caller send the
 * server's secrets to an endpoint of its choice): a configuration holding one is answered `malformed`.
 */
export async function testClientCredentials(
  config: ClientCredentialsConfig,
  fetch: typeof globalThis.fetch,
  now: () => number = Date.now,
): Promise<TokenTestResult> {
  const started = now()
  const elapsed = () => Math.max(0, Math.round(now() - started))
  if (ENV_REFERENCE.test(config.client_id) || ENV_REFERENCE.test(config.client_secret)) {
    return {
      ok: false,
      latency_ms: 0,
      error: {
        kind: 'malformed',
        message:
          '$ENV: references are resolved by the SDK that runs the exchange; the registry does not read its own environment for them',
      },
    }
  }
  const form = new URLSearchParams({ grant_type: 'client_credentials' })
  if (config.scope) form.set('scope', config.scope)
  for (const resource of config.resource === undefined ? [] : [config.resource].flat())
    form.append('resource', resource)
  if (config.audience) form.set('audience', config.audience)
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  }
  if ((config.auth_method ?? 'basic') === 'basic') {
    // RFC 6749 §2.3.1: each part form-urlencoded before Base64.
    const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+')
    headers.authorization = `Basic ${Buffer.from(`${encode(config.client_id)}:${encode(config.client_secret)}`).toString('base64')}`
  } else {
    form.set('client_id', config.client_id)
    form.set('client_secret', config.client_secret)
  }
  let response: Response
  let text: string
  try {
    response = await fetch(config.token_endpoint, { method: 'POST', headers, body: form.toString() })
    text = await response.text()
  } catch (error) {
    return {
      ok: false,
      latency_ms: elapsed(),
      error: {
        kind: 'network',
        message: `the token endpoint could not be reached: ${error instanceof Error ? error.message : String(error)}`,
      },
    }
  }
  const latency = elapsed()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  const fields = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>
  if (response.status >= 200 && response.status < 300) {
    if (
      typeof fields.access_token === 'string' &&
      fields.access_token !== '' &&
      typeof fields.token_type === 'string'
    ) {
      return { ok: true, latency_ms: latency }
    }
    return {
      ok: false,
      latency_ms: latency,
      error: {
        kind: 'malformed',
        message: `the token endpoint answered ${response.status} without an access_token and token_type`,
        http_status: response.status,
      },
    }
  }
  const oauthError = typeof fields.error === 'string' ? fields.error : undefined
  const description = typeof fields.error_description === 'string' ? fields.error_description : undefined
  return {
    ok: false,
    latency_ms: latency,
    error: {
      kind: 'oauth',
      message: oauthError
        ? `the token endpoint refused the client: ${oauthError}${description ? ` (${description})` : ''}`
        : `the token endpoint answered ${response.status}`,
      ...(oauthError ? { oauth_error: oauthError } : {}),
      ...(description ? { oauth_error_description: description } : {}),
      http_status: response.status,
    },
  }
}
