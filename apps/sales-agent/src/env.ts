/**
 * The sales agent's configuration, read once from the environment with zod. Everything else is derived from it
 * in deps.ts; nothing else reads `process.env`.
 */
import type { Principal } from '@adwire/agent-server'
import {
  parsePermissions as permissionsOver,
  parseTokenGrants,
  type TokenGrant,
} from '@adwire/agent-server/host'
import {
  flag,
  httpFields,
  httpLimits,
  intIn,
  optionalHttpUrl,
  optionalText,
  readEnv,
  serviceFields,
  serviceSettings,
  type HttpLimitSettings,
  type ServiceSettings,
} from '@adwire/service-env'
import { RESOURCES, type BuyReview, type SellerSettings } from '@adwire/seller'
import { z } from 'zod'

export { EnvError, type DatabaseConfig } from '@adwire/service-env'

/** One configured bearer token: the caller it authenticates and what it may do. */
export type { TokenGrant }

export type { BuyReview } from '@adwire/seller'

/** The sales agent's settings: the shared ones (port, host, database, public URL) and its own. */
export interface SalesAgentEnv extends ServiceSettings, SellerSettings {
  /** The HTTP server's timeouts and connection cap (HTTP_*); unset ones keep the service-kit defaults. */
  readonly http: HttpLimitSettings
  readonly publicUrl?: string
  /** Bearer tokens from TOKENS; empty: one is generated at the first start and kept (hashed) in the database. */
  readonly tokens: readonly TokenGrant[]
  /** The official test-kit demo keys (`demo-<kit>-…` sandbox, `demo-<kit>-live-…` live) are accepted. */
  readonly testKitCredentials: boolean
  /** Test only: comply_test_controller is served (COMPLY_TEST_CONTROLLER=1); off, it answers UNSUPPORTED_FEATURE. */
  readonly complyTestController: boolean
  /** Principals every account of which is sandbox (SANDBOX_PRINCIPALS, e.g. a compliance grader's token). */
  readonly sandboxPrincipals: readonly string[]
  /** JWT bearer verification (HMAC secret), when JWT_SECRET is set. */
  readonly jwt?: { readonly issuer: string; readonly audience: string; readonly secret: string }
  /** The webhook-signing private JWK from SIGNING_KEY_JWK; unset: generated once and kept in the database. */
  readonly signingKey?: Record<string, unknown>
  /** Development only: webhook URLs may be plain http and reach loopback or private addresses. */
  readonly allowInsecureWebhookUrls: boolean
  readonly idempotencyTtlSeconds: number
  /** The creative agent whose formats the catalog references (format_id agent_url). */
  readonly creativeAgentUrl: string
  /** Which buys wait for review when the buyer gave a push_notification_config. */
  readonly buyReview: BuyReview
  /** The total budget above which `over_budget` review applies. */
  readonly reviewBudgetThreshold: number
  /** How long the simulated review takes before the buy is confirmed, seconds. */
  readonly reviewSeconds: number
  /** Creatives in known formats: approved at once (`auto`) or after REVIEW_SECONDS (`manual`). */
  readonly creativeReview: 'auto' | 'manual'
  /** The seed of the delivery simulation (same seed, same delivery). */
  readonly deliverySeed: string
  /** Demo only: every buy's scheduled delivery reports this often, seconds, whatever its frequency (DEMO_REPORT_SECONDS). */
  readonly demoReportSeconds?: number
  /** How long webhook_activity's fire log is kept, seconds (WEBHOOK_ACTIVITY_RETENTION_DAYS). */
  readonly webhookActivityRetentionSeconds: number
}

/**
 * Permissions text: `+`-joined items, each `permission` (on every area) or `area.permission`
 * (e.g. `products.read+media_buys.read+media_buys.write`). Undefined when an item is unknown.
 *
 * @example
 * parsePermissions('reports.read+media_buys.write') // { reports: ['read'], media_buys: ['write'] }
 */
export function parsePermissions(text: string): Principal['permissions'] | undefined {
  return permissionsOver(text, RESOURCES)
}

/**
 * TOKENS: comma-separated `principal_id:token[:permissions]` (see {@link parsePermissions}; default
 * `read+write` on every area).
 */
function parseTokens(value: string | undefined, ctx: z.RefinementCtx): TokenGrant[] {
  const { grants, problems } = parseTokenGrants(value, RESOURCES)
  for (const message of problems) ctx.addIssue({ code: 'custom', message })
  return grants
}

const parseJwk = (value: string | undefined, ctx: z.RefinementCtx) => {
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
}

const EnvSchema = z.object({
  ...serviceFields({ name: 'sales-agent', port: 4500 }),
  ...httpFields(),
  TOKENS: z.string().optional().transform(parseTokens),
  TEST_KIT_CREDENTIALS: flag(),
  COMPLY_TEST_CONTROLLER: flag(),
  SANDBOX_PRINCIPALS: z
    .string()
    .optional()
    .transform((value, ctx) => {
      const ids = (value ?? '')
        .split(',')
        .map((id) => id.trim())
        .filter((id) => id !== '')
      for (const id of ids)
        if (!/^[A-Za-z0-9_.@-]{1,128}$/.test(id))
          ctx.addIssue({ code: 'custom', message: `"${id.slice(0, 40)}" is not a principal id` })
      return ids
    }),
  JWT_SECRET: optionalText.refine((value) => value === undefined || value.length >= 32, {
    message: 'JWT_SECRET must be at least 32 characters',
  }),
  JWT_ISSUER: optionalText,
  JWT_AUDIENCE: optionalText,
  SIGNING_KEY_JWK: optionalText.transform(parseJwk),
  ALLOW_INSECURE_WEBHOOK_URLS: flag(),
  IDEMPOTENCY_TTL_SECONDS: intIn('IDEMPOTENCY_TTL_SECONDS', 3600, 604_800, 86_400),
  CREATIVE_AGENT_URL: optionalHttpUrl('CREATIVE_AGENT_URL'),
  BUY_REVIEW: z.enum(['none', 'over_budget', 'always']).default('over_budget'),
  REVIEW_BUDGET_THRESHOLD: intIn('REVIEW_BUDGET_THRESHOLD', 0, 1_000_000_000, 100_000),
  REVIEW_SECONDS: intIn('REVIEW_SECONDS', 0, 86_400, 2),
  REVIEW_CREDIT_LIMIT: intIn('REVIEW_CREDIT_LIMIT', 0, 1_000_000_000_000, 0),
  REVIEW_PO_THRESHOLD: intIn('REVIEW_PO_THRESHOLD', 0, 1_000_000_000_000, 0),
  CREATIVE_REVIEW: z.enum(['auto', 'manual']).default('auto'),
  DELIVERY_SEED: z.string().trim().default('adwire'),
  DEMO_REPORT_SECONDS: intIn('DEMO_REPORT_SECONDS', 0, 86_400, 0),
  WEBHOOK_ACTIVITY_RETENTION_DAYS: intIn('WEBHOOK_ACTIVITY_RETENTION_DAYS', 1, 3650, 30),
})

/**
 * Reads and checks the sales agent's environment variables; throws {@link EnvError} naming each bad variable
 * (token values are never repeated in the message).
 *
 * @example
 * const env = parseEnv({ PORT: '0', TOKENS: 'buyer-1:tok_0123456789abcdef:read+write' })
 */
export function parseEnv(source: Readonly<Record<string, string | undefined>> = process.env): SalesAgentEnv {
  const values = readEnv(EnvSchema, source)
  const settings = serviceSettings(values)
  return {
    ...settings,
    http: httpLimits(values),
    tokens: values.TOKENS,
    testKitCredentials: values.TEST_KIT_CREDENTIALS,
    complyTestController: values.COMPLY_TEST_CONTROLLER,
    sandboxPrincipals: values.SANDBOX_PRINCIPALS,
    ...(values.JWT_SECRET
      ? {
          jwt: {
            secret: values.JWT_SECRET,
            issuer: values.JWT_ISSUER ?? settings.publicUrl ?? 'adwire-sales-agent',
            audience: values.JWT_AUDIENCE ?? 'adwire-sales-agent',
          },
        }
      : {}),
    ...(values.SIGNING_KEY_JWK ? { signingKey: values.SIGNING_KEY_JWK } : {}),
    allowInsecureWebhookUrls: values.ALLOW_INSECURE_WEBHOOK_URLS,
    idempotencyTtlSeconds: values.IDEMPOTENCY_TTL_SECONDS,
    creativeAgentUrl: (values.CREATIVE_AGENT_URL ?? 'http://127.0.0.1:4200').replace(/\/+$/, ''),
    buyReview: values.BUY_REVIEW,
    reviewBudgetThreshold: values.REVIEW_BUDGET_THRESHOLD,
    reviewSeconds: values.REVIEW_SECONDS,
    ...(values.REVIEW_CREDIT_LIMIT > 0 ? { reviewCreditLimit: values.REVIEW_CREDIT_LIMIT } : {}),
    ...(values.REVIEW_PO_THRESHOLD > 0 ? { reviewPoThreshold: values.REVIEW_PO_THRESHOLD } : {}),
    creativeReview: values.CREATIVE_REVIEW,
    deliverySeed: values.DELIVERY_SEED,
    ...(values.DEMO_REPORT_SECONDS > 0 ? { demoReportSeconds: values.DEMO_REPORT_SECONDS } : {}),
    webhookActivityRetentionSeconds: values.WEBHOOK_ACTIVITY_RETENTION_DAYS * 86_400,
  }
}
