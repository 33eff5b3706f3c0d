/**
 * The creative agent's configuration, read once from the environment with zod. Everything else is derived
 * from it in deps.ts; nothing else reads `process.env`.
 */
import { z } from 'zod'
import type { Permission, Principal } from '@adwire/agent-server'

/** Where the agent keeps its state: one SQLite file (one host) or a PostgreSQL schema (many instances). */
export type DatabaseConfig =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly connectionString: string; readonly schema: string }

/** One configured bearer token: the caller it authenticates and what it may do with creatives. */
export interface TokenGrant {
  readonly token: string
  readonly principal: Principal
}

export interface CreativeAgentEnv {
  readonly port: number
  /** The interface to listen on; unset: every interface. */
  readonly host?: string
  readonly database: DatabaseConfig
  /**
   * The agent's public base URL (no trailing slash): every format_id's `agent_url`, the base of preview URLs,
   * brand.json and the JWKS. Unset: `http://{host}:{port}` as listened on.
   */
  readonly publicUrl?: string
  /** Bearer tokens from TOKENS; empty: one is generated at the first start and kept (hashed) in the database. */
  readonly tokens: readonly TokenGrant[]
  /** The webhook-signing private JWK from SIGNING_KEY_JWK; unset: generated once and kept in the database. */
  readonly signingKey?: Record<string, unknown>
  /** Development only: webhook URLs may be plain http and reach loopback or private addresses. */
  readonly allowInsecureWebhookUrls: boolean
  /** How long build_creative responses are replayed by idempotency_key, seconds (3600 to 604800). */
  readonly idempotencyTtlSeconds: number
  /** Other creative agents listed in list_creative_formats' `creative_agents`, from CREATIVE_AGENTS. */
  readonly creativeAgents: readonly { readonly agent_url: string; readonly agent_name?: string }[]
}

const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/
const PERMISSIONS: readonly Permission[] = ['read', 'write', 'delete', 'approve']
const TOKEN = /^[\x21-\x7e]{16,512}$/

const flag = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', ''])
  .default('')
  .transform((value) => value === '1' || value === 'true' || value === 'yes')

const blankToUndefined = (value: string | undefined) =>
  value === undefined || value.trim() === '' ? undefined : value.trim()

/**
 * TOKENS: comma-separated `principal_id:token[:permissions]`, permissions `+`-joined from read, write,
 * delete, approve on creatives (default `read+write`). Example: `buyer-1:tok_0123456789abcdef:read+write`.
 */
function parseTokens(value: string | undefined, ctx: z.RefinementCtx): TokenGrant[] {
  const grants: TokenGrant[] = []
  const seen = new Set<string>()
  for (const [index, entry] of (value ?? '').split(',').entries()) {
    const item = entry.trim()
    if (item === '') continue
    const [principalId, token, permissions, ...rest] = item.split(':')
    const problem = (message: string) =>
      ctx.addIssue({ code: 'custom', message: `entry ${index + 1}: ${message}` })
    if (rest.length > 0 || !principalId || !token) {
      problem('expected principal_id:token[:permissions]')
      continue
    }
    if (!/^[A-Za-z0-9_.@-]{1,128}$/.test(principalId)) {
      problem('the principal id may hold letters, digits, _ . @ - (1 to 128)')
      continue
    }
    if (!TOKEN.test(token)) {
      problem('the token must be 16 to 512 printable ASCII characters without spaces, commas or colons')
      continue
    }
    const granted = (permissions ?? 'read+write').split('+').filter(Boolean)
    const unknown = granted.filter((permission) => !PERMISSIONS.includes(permission as Permission))
    if (granted.length === 0 || unknown.length > 0) {
      problem(`permissions are read, write, delete, approve joined with +, not "${permissions ?? ''}"`)
      continue
    }
    if (seen.has(token)) {
      problem('the same token is listed twice')
      continue
    }
    seen.add(token)
    grants.push({
      token,
      principal: { principal_id: principalId, permissions: { creatives: granted as Permission[] } },
    })
  }
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

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(4200),
  HOST: z.string().optional().transform(blankToUndefined),
  DATABASE_URL: z
    .string()
    .trim()
    .default('sqlite:./data/creative-agent.sqlite')
    .refine((value) => /^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(value), {
      message: 'DATABASE_URL must be sqlite:PATH or a postgres:// URL',
    }),
  DATABASE_SCHEMA: z
    .string()
    .trim()
    .default('adwire_creative_agent')
    .refine((value) => SCHEMA.test(value) && !value.startsWith('pg_'), {
      message: 'DATABASE_SCHEMA must be a plain lowercase identifier (letters, digits, _)',
    }),
  PUBLIC_URL: z
    .string()
    .optional()
    .transform(blankToUndefined)
    .refine(
      (value) =>
        value === undefined ||
        (URL.canParse(value) &&
          /^https?:$/.test(new URL(value).protocol) &&
          !new URL(value).search &&
          !new URL(value).hash),
      { message: 'PUBLIC_URL must be an absolute http(s) URL without query or fragment' },
    ),
  TOKENS: z.string().optional().transform(parseTokens),
  SIGNING_KEY_JWK: z
    .string()
    .optional()
    .transform(blankToUndefined)
    .transform((value, ctx) => {
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
        message: 'SIGNING_KEY_JWK must be a private JWK (JSON with "kid" and "d"), Ed25519 or P-256',
      })
      return z.NEVER
    }),
  ALLOW_INSECURE_WEBHOOK_URLS: flag,
  CREATIVE_AGENTS: z.string().optional().transform(parseCreativeAgents),
  IDEMPOTENCY_TTL_SECONDS: z
    .string()
    .trim()
    .default('')
    .transform((value) => (value === '' ? 86_400 : Number(value)))
    .refine((value) => Number.isInteger(value) && value >= 3600 && value <= 604_800, {
      message: 'IDEMPOTENCY_TTL_SECONDS must be a whole number of seconds from 3600 to 604800',
    }),
})

/** The environment is unusable: the message lists every problem, one per line. */
export class EnvError extends Error {
  override readonly name = 'EnvError'
}

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
  const parsed = EnvSchema.safeParse(source)
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'env'}: ${issue.message}`)
    throw new EnvError(`invalid environment:\n  ${lines.join('\n  ')}`)
  }
  const values = parsed.data
  const database: DatabaseConfig = values.DATABASE_URL.startsWith('sqlite:')
    ? { kind: 'sqlite', path: values.DATABASE_URL.slice('sqlite:'.length) }
    : { kind: 'postgres', connectionString: values.DATABASE_URL, schema: values.DATABASE_SCHEMA }
  return {
    port: values.PORT,
    ...(values.HOST ? { host: values.HOST } : {}),
    database,
    ...(values.PUBLIC_URL ? { publicUrl: values.PUBLIC_URL.replace(/\/+$/, '') } : {}),
    tokens: values.TOKENS,
    ...(values.SIGNING_KEY_JWK ? { signingKey: values.SIGNING_KEY_JWK } : {}),
    allowInsecureWebhookUrls: values.ALLOW_INSECURE_WEBHOOK_URLS,
    idempotencyTtlSeconds: values.IDEMPOTENCY_TTL_SECONDS,
    creativeAgents: values.CREATIVE_AGENTS,
  }
}
