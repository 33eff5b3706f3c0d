/**
 * The receiver's configuration, read once from the environment with zod. Everything else is derived from it
 * in deps.ts; nothing else reads `process.env`.
 */
import { z } from 'zod'

/** Where the receiver keeps its state: one SQLite file (one host) or a PostgreSQL schema (many instances). */
export type DatabaseConfig =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly connectionString: string; readonly schema: string }

export interface ReceiverEnv {
  readonly port: number
  /** The interface to listen on; unset: every interface. */
  readonly host?: string
  readonly database: DatabaseConfig
  /** Set: this token; unset: the one stored in the database, generated at first start. */
  readonly adminToken?: string
  /** Every published event is POSTed here as JSON, with retries until it is accepted. */
  readonly downstreamUrl?: string
  /** The base of registration URLs (`{PUBLIC_URL}/webhooks/{id}`) and of the signed `@target-uri`. */
  readonly publicUrl?: string
  /** Development only: key URLs may be plain http and point at loopback or private addresses. */
  readonly allowInsecureKeyUrls: boolean
  /**
   * How long a delivery owns its event before a retry may take it over (its process may have died),
   * seconds. Default 30.
   */
  readonly deliveryLeaseSeconds: number
}

const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/

const httpUrl = (name: string) =>
  z
    .string()
    .trim()
    .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), {
      message: `${name} must be an absolute http(s) URL`,
    })

const flag = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', ''])
  .default('')
  .transform((value) => value === '1' || value === 'true' || value === 'yes')

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(4300),
  HOST: z
    .string()
    .trim()
    .optional()
    .transform((value) => value || undefined),
  DATABASE_URL: z
    .string()
    .trim()
    .default('sqlite:./data/receiver.sqlite')
    .refine((value) => /^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(value), {
      message: 'DATABASE_URL must be sqlite:PATH or a postgres:// URL',
    }),
  DATABASE_SCHEMA: z
    .string()
    .trim()
    .default('adwire_receiver')
    .refine((value) => SCHEMA.test(value) && !value.startsWith('pg_'), {
      message: 'DATABASE_SCHEMA must be a plain lowercase identifier (letters, digits, _)',
    }),
  ADMIN_TOKEN: z
    .string()
    .optional()
    .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()))
    .refine((value) => value === undefined || (value.length >= 16 && /^[\x21-\x7e]+$/.test(value)), {
      message: 'ADMIN_TOKEN must be at least 16 printable ASCII characters without spaces',
    }),
  DOWNSTREAM_URL: httpUrl('DOWNSTREAM_URL')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  PUBLIC_URL: httpUrl('PUBLIC_URL')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  ALLOW_INSECURE_KEY_URLS: flag,
  DELIVERY_LEASE_SECONDS: z
    .string()
    .trim()
    .default('')
    .transform((value) => (value === '' ? 30 : Number(value)))
    .refine((value) => Number.isInteger(value) && value >= 1 && value <= 600, {
      message: 'DELIVERY_LEASE_SECONDS must be a whole number of seconds from 1 to 600',
    }),
})

/** The environment is unusable: the message lists every problem, one per line. */
export class EnvError extends Error {
  override readonly name = 'EnvError'
}

/**
 * Reads and checks the receiver's environment variables; throws {@link EnvError} naming each bad variable.
 *
 * @example
 * const env = parseEnv({ PORT: '4300', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' })
 * env.database // { kind: 'postgres', connectionString: 'postgres://…', schema: 'adwire_receiver' }
 */
export function parseEnv(source: Readonly<Record<string, string | undefined>> = process.env): ReceiverEnv {
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
    ...(values.ADMIN_TOKEN ? { adminToken: values.ADMIN_TOKEN } : {}),
    ...(values.DOWNSTREAM_URL ? { downstreamUrl: values.DOWNSTREAM_URL } : {}),
    ...(values.PUBLIC_URL ? { publicUrl: values.PUBLIC_URL.replace(/\/+$/, '') } : {}),
    allowInsecureKeyUrls: values.ALLOW_INSECURE_KEY_URLS,
    deliveryLeaseSeconds: values.DELIVERY_LEASE_SECONDS,
  }
}
