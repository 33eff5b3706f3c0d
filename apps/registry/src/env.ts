/**
 * The registry's configuration, read once from the environment with zod. Nothing else reads `process.env`.
 */
import { z } from 'zod'
import { MEMBERSHIP_TIERS, type MembershipTier } from './domain/membership.js'

/** Where the registry keeps its state: one SQLite file (one host) or a PostgreSQL schema (many instances). */
export type DatabaseConfig =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly connectionString: string; readonly schema: string }

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

export interface RegistryEnv {
  readonly port: number
  /** The interface to listen on; unset: every interface. */
  readonly host?: string
  readonly database: DatabaseConfig
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
}

const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/

const flag = (fallback: boolean) =>
  z
    .enum(['1', '0', 'true', 'false', 'yes', 'no', ''])
    .default('')
    .transform((value) => (value === '' ? fallback : value === '1' || value === 'true' || value === 'yes'))

const optionalText = z
  .string()
  .trim()
  .optional()
  .transform((value) => value || undefined)

const intIn = (name: string, min: number, max: number, fallback: number) =>
  z
    .string()
    .trim()
    .default('')
    .transform((value) => (value === '' ? fallback : Number(value)))
    .refine((value) => Number.isInteger(value) && value >= min && value <= max, {
      message: `${name} must be a whole number from ${min} to ${max}`,
    })

const EnvSchema = z.object({
  PORT: intIn('PORT', 0, 65_535, 4100),
  HOST: optionalText,
  DATABASE_URL: z
    .string()
    .trim()
    .default('sqlite:./data/registry.sqlite')
    .refine((value) => /^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(value), {
      message: 'DATABASE_URL must be sqlite:PATH or a postgres:// URL',
    }),
  DATABASE_SCHEMA: z
    .string()
    .trim()
    .default('adwire_registry')
    .refine((value) => SCHEMA.test(value) && !value.startsWith('pg_'), {
      message: 'DATABASE_SCHEMA must be a plain lowercase identifier (letters, digits, _)',
    }),
  PUBLIC_URL: optionalText.refine((value) => value === undefined || /^https?:\/\/[^\s]+$/.test(value), {
    message: 'PUBLIC_URL must be an absolute http(s) URL',
  }),
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

/** The environment is unusable: the message lists every problem, one per line. */
export class EnvError extends Error {
  override readonly name = 'EnvError'
}

/**
 * Reads and checks the registry's environment variables; throws {@link EnvError} naming each bad variable.
 *
 * @example
 * const env = parseEnv({ PORT: '0', DATABASE_URL: 'sqlite:/tmp/registry.sqlite', SEED: '0' })
 * env.database // { kind: 'sqlite', path: '/tmp/registry.sqlite' }
 */
export function parseEnv(source: Readonly<Record<string, string | undefined>> = process.env): RegistryEnv {
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
  }
}
