/**
 * The creative agent's configuration, read once from the environment with zod. Everything else is derived
 * from it in deps.ts; nothing else reads `process.env`.
 */
import { parseTokenGrants, type TokenGrant } from '@adwire/agent-server/host'
import {
  flag,
  httpFields,
  httpLimits,
  intIn,
  optionalText,
  readEnv,
  serviceFields,
  serviceSettings,
  type HttpLimitSettings,
  type ServiceSettings,
} from '@adwire/service-env'
import { z } from 'zod'

export { EnvError, type DatabaseConfig } from '@adwire/service-env'

/** One configured bearer token: the caller it authenticates and what it may do with creatives. */
export type { TokenGrant }

/** The creative agent's settings: the shared ones (port, host, database, public URL) and its own. */
export interface CreativeAgentEnv extends ServiceSettings {
  /** The HTTP server's timeouts and connection cap (HTTP_*); unset ones keep the service-kit defaults. */
  readonly http: HttpLimitSettings
  /**
   * The agent's public base URL (no trailing slash): every format_id's `agent_url`, the base of preview URLs,
   * brand.json and the JWKS. Unset: `http://{host}:{port}` as listened on.
   */
  readonly publicUrl?: string
  /** Bearer tokens from TOKENS; empty: one is generated at the first start and kept (hashed) in the database. */
  readonly tokens: readonly TokenGrant[]
  /** The webhook-signing private JWK from SIGNING_KEY_JWK; unset: generated once and kept in the database. */
  readonly signingKey?: Record<string, unknown>
  /**
   * The request-signing private JWK from REQUEST_SIGNING_KEY_JWK (a key separate from the webhook key, with its
   * own kid); unset: generated once and kept in the database.
   */
  readonly requestSigningKey?: Record<string, unknown>
  /** Development only: webhook URLs may be plain http and reach loopback or private addresses. */
  readonly allowInsecureWebhookUrls: boolean
  /** How long build_creative responses are replayed by idempotency_key, seconds (3600 to 604800). */
  readonly idempotencyTtlSeconds: number
  /** Other creative agents listed in list_creative_formats' `creative_agents`, from CREATIVE_AGENTS. */
  readonly creativeAgents: readonly { readonly agent_url: string; readonly agent_name?: string }[]
}

/**
 * TOKENS: comma-separated `principal_id:token[:permissions]`, permissions `+`-joined from read, write,
 * delete, approve on creatives (default `read+write`). Example: `buyer-1:tok_0123456789abcdef:read+write`.
 */
function parseTokens(value: string | undefined, ctx: z.RefinementCtx): TokenGrant[] {
  const { grants, problems } = parseTokenGrants(value, ['creatives'])
  for (const message of problems) ctx.addIssue({ code: 'custom', message })
  return grants
}

/**
 * CREATIVE_AGENTS: comma-separated `https://agent.example[=Display name]`, other creative agents buyers are
 * pointed at in list_creative_formats (`creative_agents`).
 */
function parseCreativeAgents(value: string | undefined, ctx: z.RefinementCtx) {
  const agents: { agent_url: string; agent_name?: string }[] = []
  for (const [index, entry] of (value ?? '').split(',').entries()) {
    const item = entry.trim()
    if (item === '') continue
    const separator = item.indexOf('=')
    const url = (separator === -1 ? item : item.slice(0, separator)).trim()
    const name = separator === -1 ? '' : item.slice(separator + 1).trim()
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      ctx.addIssue({ code: 'custom', message: `entry ${index + 1}: "${url}" is not an absolute http(s) URL` })
      continue
    }
    agents.push({ agent_url: url, ...(name ? { agent_name: name } : {}) })
  }
  return agents
}

/** A private JWK (JSON with "kid" and "d") in a variable named `name`. */
function privateJwk(name: string) {
  return optionalText.transform((value, ctx) => {
    if (value === undefined) return undefined
    try {
      const jwk = JSON.parse(value) as unknown
      if (typeof jwk === 'object' && jwk !== null && !Array.isArray(jwk)) {
        const record = jwk as Record<string, unknown>
        if (typeof record.d === 'string' && typeof record.kid === 'string') return record
      }
    } catch {
      // reported below
    }
    ctx.addIssue({
      code: 'custom',
      message: `${name} must be a private JWK (JSON with "kid" and "d"), Ed25519 or P-256`,
    })
    return z.NEVER
  })
}

const EnvSchema = z.object({
  ...serviceFields({ name: 'creative-agent', port: 4200 }),
  ...httpFields(),
  TOKENS: z.string().optional().transform(parseTokens),
  SIGNING_KEY_JWK: privateJwk('SIGNING_KEY_JWK'),
  REQUEST_SIGNING_KEY_JWK: privateJwk('REQUEST_SIGNING_KEY_JWK'),
  ALLOW_INSECURE_WEBHOOK_URLS: flag(),
  CREATIVE_AGENTS: z.string().optional().transform(parseCreativeAgents),
  IDEMPOTENCY_TTL_SECONDS: intIn('IDEMPOTENCY_TTL_SECONDS', 3600, 604_800, 86_400),
})

/**
 * Reads and checks the creative agent's environment variables; throws {@link EnvError} naming each bad
 * variable (token values are never repeated in the message).
 *
 * @example
 * const env = parseEnv({ PORT: '0', DATABASE_URL: 'sqlite:/tmp/agent.sqlite', TOKENS: 'buyer-1:tok_0123456789abcdef' })
 * env.tokens[0].principal // { principal_id: 'buyer-1', permissions: { creatives: ['read', 'write'] } }
 */
export function parseEnv(
  source: Readonly<Record<string, string | undefined>> = process.env,
): CreativeAgentEnv {
  const values = readEnv(EnvSchema, source)
  return {
    ...serviceSettings(values),
    http: httpLimits(values),
    tokens: values.TOKENS,
    ...(values.SIGNING_KEY_JWK ? { signingKey: values.SIGNING_KEY_JWK } : {}),
    ...(values.REQUEST_SIGNING_KEY_JWK ? { requestSigningKey: values.REQUEST_SIGNING_KEY_JWK } : {}),
    allowInsecureWebhookUrls: values.ALLOW_INSECURE_WEBHOOK_URLS,
    idempotencyTtlSeconds: values.IDEMPOTENCY_TTL_SECONDS,
    creativeAgents: values.CREATIVE_AGENTS,
  }
}
