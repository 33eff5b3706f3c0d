/**
 * The registry's configuration, read once from the environment with zod. Nothing else reads `process.env`.
 */
import {
  flag,
  httpFields,
  httpLimits,
  intIn,
  readEnv,
  serviceFields,
  serviceSettings,
  type HttpLimitSettings,
  type ServiceSettings,
} from '@adwire/service-env'
import { z } from 'zod'
import { parseCredentialKeys } from './compliance/credentials.js'
import { MEMBERSHIP_TIERS, type MembershipTier } from './domain/membership.js'

export { EnvError, type DatabaseConfig } from '@adwire/service-env'

/** How the crawler reaches publisher and brand sites. */
export interface CrawlConfig {
  /**
   * Local use and tests only: allow loopback and private addresses and plain `http:` origins. Off by default:
   * crawls are https-only and refuse every non-public address (SSRF-safe).
   */
  readonly allowPrivate: boolean
  /** Where a domain's files are fetched from instead of `https://{domain}` (local mirrors, tests). */
  readonly origins: Readonly<Record<string, string>>
  /** Whole-fetch time cap, milliseconds. */
  readonly timeoutMs: number
  /** Body size cap, bytes. */
  readonly maxBytes: number
}

/** The registry's settings: the shared ones (port, host, database, public URL) and its own. */
export interface RegistryEnv extends ServiceSettings {
  /** The HTTP server's timeouts and connection cap (HTTP_*); unset ones keep the service-kit defaults. */
  readonly http: HttpLimitSettings
  /** The registry's public base URL (OAuth issuer, links); default `http://127.0.0.1:{port}`. */
  readonly publicUrl?: string
  /** Load the demo world into an empty database. Default true (`SEED=0` disables). */
  readonly seed: boolean
  readonly crawl: CrawlConfig
  /** How long feed events and cursors stay valid, days. Default 90. */
  readonly feedRetentionDays: number
  /** How often events older than the retention are deleted, seconds (also once at start); 0: never. */
  readonly feedPruneIntervalSeconds: number
  /**
   * The membership tier of every organization on this registry (there is no billing flow): `explorer` has no
   * API access, so its `public` agent registrations are stored `members_only`. Default `member`.
   */
  readonly memberTier: MembershipTier
  /** Requests per minute per organization (or client IP when anonymous) by class; 0 turns a class off. */
  readonly rateLimits: RateLimits
  /**
   * A static bearer that carries registry-administrator rights (forced brand crawls), as the upstream's
   * `ADMIN_API_KEY`; unset: no administrator (those operations answer 403).
   */
  readonly adminApiKey?: string
  /**
   * The AES-256-GCM keys sealing agent credentials at rest (`AGENT_CREDENTIALS_KEY`: comma-separated base64
   * 32-byte keys; the first seals, all open). None: credentials cannot be saved (500 `credentials_unavailable`).
   */
  readonly credentialKeys: readonly Buffer[]
  /** The longest the monitoring scheduler sleeps before re-reading due times, seconds. Default 60. */
  readonly monitoringPollSeconds: number
  /** How the registry reaches live agents (probing, compliance runs). */
  readonly agents: AgentsConfig
}

/** Live agents: probing and compliance runs. */
export interface AgentsConfig {
  /**
   * Local use and tests only (ALLOW_PRIVATE_AGENTS): plain `http:` agents on loopback and private addresses. Off
   * by default: agents are reached over https on public addresses only (SSRF-safe).
   */
  readonly allowPrivate: boolean
  /** One HTTP exchange with an agent, ms (AGENT_TIMEOUT_MS). */
  readonly timeoutMs: number
  /** compareStoryboard's reference agent (COMPLIANCE_REFERENCE_AGENT_URL), if any. */
  readonly referenceUrl?: string
}

/** The per-minute budgets of the operations the document declares 429 for (see `routes/rate-limit.ts`). */
export interface RateLimits {
  /** Brand and property resolution: resolve, bulk resolve, brand.json. Default 600. */
  readonly read: number
  /** Saves and registrations: brand and property saves, member agents, organizations. Default 60. */
  readonly write: number
  /** Live outbound fetches: crawl requests and adagents.json revalidation. Default 10. */
  readonly crawl: number
}

const EnvSchema = z.object({
  ...serviceFields({ name: 'registry', port: 4100 }),
  ...httpFields(),
  SEED: flag(true),
  ALLOW_PRIVATE_CRAWL: flag(false),
  CRAWL_ORIGINS: z
    .string()
    .trim()
    .default('')
    .transform((value, context) => {
      const origins: Record<string, string> = {}
      for (const entry of value
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean)) {
        const [domain, origin] = entry.split('=', 2).map((part) => part?.trim() ?? '')
        if (!domain || !origin || !/^https?:\/\/[^/\s]+$/.test(origin)) {
          context.addIssue({
            code: 'custom',
            message: `CRAWL_ORIGINS entry "${entry}" is not domain=http(s)://host[:port]`,
          })
          continue
        }
        origins[domain.toLowerCase()] = origin
      }
      return origins
    }),
  CRAWL_TIMEOUT_MS: intIn('CRAWL_TIMEOUT_MS', 100, 120_000, 10_000),
  CRAWL_MAX_BYTES: intIn('CRAWL_MAX_BYTES', 1024, 16 * 1024 * 1024, 1024 * 1024),
  FEED_RETENTION_DAYS: intIn('FEED_RETENTION_DAYS', 1, 3650, 90),
  FEED_PRUNE_INTERVAL_SECONDS: intIn('FEED_PRUNE_INTERVAL_SECONDS', 0, 7 * 86_400, 3600),
  RATE_LIMIT_READ_PER_MINUTE: intIn('RATE_LIMIT_READ_PER_MINUTE', 0, 1_000_000, 600),
  RATE_LIMIT_WRITE_PER_MINUTE: intIn('RATE_LIMIT_WRITE_PER_MINUTE', 0, 1_000_000, 60),
  RATE_LIMIT_CRAWL_PER_MINUTE: intIn('RATE_LIMIT_CRAWL_PER_MINUTE', 0, 1_000_000, 10),
  AGENT_CREDENTIALS_KEY: z
    .string()
    .trim()
    .default('')
    .transform((value, context) => {
      try {
        return parseCredentialKeys(value)
      } catch (error) {
        context.addIssue({
          code: 'custom',
          message: `AGENT_CREDENTIALS_KEY: ${(error as Error).message} (base64 of 32 random bytes: openssl rand -base64 32)`,
        })
        return []
      }
    }),
  MONITORING_POLL_SECONDS: intIn('MONITORING_POLL_SECONDS', 1, 3600, 60),
  ALLOW_PRIVATE_AGENTS: flag(false),
  AGENT_TIMEOUT_MS: intIn('AGENT_TIMEOUT_MS', 100, 120_000, 15_000),
  COMPLIANCE_REFERENCE_AGENT_URL: z
    .string()
    .trim()
    .default('')
    .refine((value) => value === '' || /^https?:\/\/\S+$/.test(value), {
      message: 'COMPLIANCE_REFERENCE_AGENT_URL must be an http(s) URL',
    }),
  ADMIN_API_KEY: z
    .string()
    .trim()
    .default('')
    .refine((value) => value === '' || value.length >= 32, {
      message: 'ADMIN_API_KEY must be at least 32 characters',
    }),
  MEMBER_TIER: z
    .string()
    .trim()
    .toLowerCase()
    .default('')
    .transform((value) => value || 'member')
    .refine((value): value is MembershipTier => (MEMBERSHIP_TIERS as readonly string[]).includes(value), {
      message: `MEMBER_TIER must be one of ${MEMBERSHIP_TIERS.join(', ')}`,
    }),
})

/**
 * Reads and checks the registry's environment variables; throws {@link EnvError} naming each bad variable.
 *
 * @example
 * const env = parseEnv({ PORT: '0', DATABASE_URL: 'sqlite:/tmp/registry.sqlite', SEED: '0' })
 * env.database // { kind: 'sqlite', path: '/tmp/registry.sqlite' }
 */
export function parseEnv(source: Readonly<Record<string, string | undefined>> = process.env): RegistryEnv {
  const values = readEnv(EnvSchema, source)
  return {
    ...serviceSettings(values),
    http: httpLimits(values),
    seed: values.SEED,
    crawl: {
      allowPrivate: values.ALLOW_PRIVATE_CRAWL,
      origins: values.CRAWL_ORIGINS,
      timeoutMs: values.CRAWL_TIMEOUT_MS,
      maxBytes: values.CRAWL_MAX_BYTES,
    },
    feedRetentionDays: values.FEED_RETENTION_DAYS,
    feedPruneIntervalSeconds: values.FEED_PRUNE_INTERVAL_SECONDS,
    memberTier: values.MEMBER_TIER as MembershipTier,
    agents: {
      allowPrivate: values.ALLOW_PRIVATE_AGENTS,
      timeoutMs: values.AGENT_TIMEOUT_MS,
      ...(values.COMPLIANCE_REFERENCE_AGENT_URL
        ? { referenceUrl: values.COMPLIANCE_REFERENCE_AGENT_URL }
        : {}),
    },
    rateLimits: {
      read: values.RATE_LIMIT_READ_PER_MINUTE,
      write: values.RATE_LIMIT_WRITE_PER_MINUTE,
      crawl: values.RATE_LIMIT_CRAWL_PER_MINUTE,
    },
    credentialKeys: values.AGENT_CREDENTIALS_KEY,
    monitoringPollSeconds: values.MONITORING_POLL_SECONDS,
    ...(values.ADMIN_API_KEY ? { adminApiKey: values.ADMIN_API_KEY } : {}),
  }
}
