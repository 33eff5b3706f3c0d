/**
 * The zod pieces the services' `env.ts` files are built from, so that every service reads a flag, a number,
 * a URL and its database settings the same way and words its complaints the same way.
 */
import { z } from 'zod'

/** A PostgreSQL schema name: a plain lowercase identifier, never one of PostgreSQL's own `pg_` schemas. */
const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/

/**
 * A yes/no variable: `1`, `true`, `yes` on; `0`, `false`, `no` off; unset or empty: `fallback`.
 *
 * @example
 * z.object({ SEED: flag(true) }).parse({}) // { SEED: true }
 */
export const flag = (fallback = false) =>
  z
    .enum(['1', '0', 'true', 'false', 'yes', 'no', ''])
    .default('')
    .transform((value) => (value === '' ? fallback : value === '1' || value === 'true' || value === 'yes'))

/**
 * Free text, trimmed; unset or blank reads as `undefined`.
 *
 * @example
 * optionalText.parse('  ') // undefined
 */
export const optionalText = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()))

/**
 * A whole number from `min` to `max`; unset or empty: `fallback`.
 *
 * @example
 * z.object({ PORT: intIn('PORT', 0, 65_535, 4100) }).parse({ PORT: '8080' }) // { PORT: 8080 }
 */
export const intIn = (name: string, min: number, max: number, fallback: number) =>
  z
    .string()
    .trim()
    .default('')
    .transform((value) => (value === '' ? fallback : Number(value)))
    .refine((value) => Number.isInteger(value) && value >= min && value <= max, {
      message: `${name} must be a whole number from ${min} to ${max}`,
    })

const isHttpUrl = (value: string) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol)

/**
 * An absolute http(s) URL, required.
 *
 * @example
 * httpUrl('DOWNSTREAM_URL').parse('https://buyer.example/hook') // 'https://buyer.example/hook'
 */
export const httpUrl = (name: string) =>
  z
    .string()
    .trim()
    .refine(isHttpUrl, { message: `${name} must be an absolute http(s) URL` })

/**
 * An absolute http(s) URL, or `undefined` when unset or blank.
 *
 * @example
 * optionalHttpUrl('DOWNSTREAM_URL').parse('') // undefined
 */
export const optionalHttpUrl = (name: string) =>
  optionalText.refine((value) => value === undefined || isHttpUrl(value), {
    message: `${name} must be an absolute http(s) URL`,
  })

/**
 * The variables every adwire service reads: `PORT` (default `port`), `HOST` (unset: `127.0.0.1`, loopback only; `0.0.0.0` exposes the service),
 * `DATABASE_URL` (`sqlite:PATH`, default `sqlite:./data/{name}.sqlite`, or a `postgres://` URL),
 * `DATABASE_SCHEMA` (the PostgreSQL schema, default `adwire_{name}`) and `PUBLIC_URL` (the base URL others
 * reach the service at: absolute http(s), no query or fragment).
 *
 * @example
 * const EnvSchema = z.object({ ...serviceFields({ name: 'receiver', port: 4300 }), ADMIN_TOKEN: optionalText })
 */
export function serviceFields(options: { readonly name: string; readonly port: number }) {
  return {
    PORT: intIn('PORT', 0, 65_535, options.port),
    HOST: optionalText,
    DATABASE_URL: z
      .string()
      .trim()
      .default(`sqlite:./data/${options.name}.sqlite`)
      .refine((value) => /^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(value), {
        message: 'DATABASE_URL must be sqlite:PATH or a postgres:// URL',
      }),
    DATABASE_SCHEMA: z
      .string()
      .trim()
      .default(`adwire_${options.name.replaceAll('-', '_')}`)
      .refine((value) => SCHEMA.test(value) && !value.startsWith('pg_'), {
        message: 'DATABASE_SCHEMA must be a plain lowercase identifier (letters, digits, _)',
      }),
    PUBLIC_URL: optionalText.refine(
      (value) => {
        if (value === undefined) return true
        if (!isHttpUrl(value)) return false
        const url = new URL(value)
        return !url.search && !url.hash
      },
      { message: 'PUBLIC_URL must be an absolute http(s) URL without query or fragment' },
    ),
  }
}

const optionalIntIn = (name: string, min: number, max: number) =>
  z
    .string()
    .trim()
    .default('')
    .transform((value) => (value === '' ? undefined : Number(value)))
    .refine((value) => value === undefined || (Number.isInteger(value) && value >= min && value <= max), {
      message: `${name} must be a whole number from ${min} to ${max}`,
    })

/**
 * The HTTP server's limits (`listen({ limits })` of `@adwire/service-kit`): `HTTP_HEADERS_TIMEOUT_MS`,
 * `HTTP_REQUEST_TIMEOUT_MS`, `HTTP_KEEP_ALIVE_TIMEOUT_MS`, `HTTP_MAX_CONNECTIONS`,
 * `HTTP_MAX_CONNECTIONS_PER_CLIENT`, `HTTP_MAX_BODY_BYTES`, `HTTP_MAX_JSON_DEPTH`. Unset ones keep the
 * service-kit defaults; read them into `listen` options with {@link httpLimits}.
 *
 * @example
 * const Schema = z.object({ ...serviceFields({ name: 'receiver', port: 4300 }), ...httpFields() })
 */
export function httpFields() {
  return {
    HTTP_HEADERS_TIMEOUT_MS: optionalIntIn('HTTP_HEADERS_TIMEOUT_MS', 100, 600_000),
    HTTP_REQUEST_TIMEOUT_MS: optionalIntIn('HTTP_REQUEST_TIMEOUT_MS', 100, 3_600_000),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: optionalIntIn('HTTP_KEEP_ALIVE_TIMEOUT_MS', 100, 600_000),
    HTTP_MAX_CONNECTIONS: optionalIntIn('HTTP_MAX_CONNECTIONS', 1, 1_000_000),
    HTTP_MAX_CONNECTIONS_PER_CLIENT: optionalIntIn('HTTP_MAX_CONNECTIONS_PER_CLIENT', 1, 1_000_000),
    HTTP_MAX_BODY_BYTES: optionalIntIn('HTTP_MAX_BODY_BYTES', 1_024, 1_073_741_824),
    HTTP_MAX_JSON_DEPTH: optionalIntIn('HTTP_MAX_JSON_DEPTH', 8, 10_000),
  }
}

/** The limits set by {@link httpFields} variables, as `listen({ limits })` takes them (unset ones left out). */
export interface HttpLimitSettings {
  readonly headersTimeoutMs?: number
  readonly requestTimeoutMs?: number
  readonly keepAliveTimeoutMs?: number
  readonly maxConnections?: number
  readonly maxConnectionsPerClient?: number
  readonly maxBodyBytes?: number
  readonly maxJsonDepth?: number
}

/**
 * @example
 * httpLimits({ HTTP_MAX_CONNECTIONS: 2000 }) // { maxConnections: 2000 }
 */
export function httpLimits(values: {
  readonly HTTP_HEADERS_TIMEOUT_MS?: number | undefined
  readonly HTTP_REQUEST_TIMEOUT_MS?: number | undefined
  readonly HTTP_KEEP_ALIVE_TIMEOUT_MS?: number | undefined
  readonly HTTP_MAX_CONNECTIONS?: number | undefined
  readonly HTTP_MAX_CONNECTIONS_PER_CLIENT?: number | undefined
  readonly HTTP_MAX_BODY_BYTES?: number | undefined
  readonly HTTP_MAX_JSON_DEPTH?: number | undefined
}): HttpLimitSettings {
  const entries = {
    headersTimeoutMs: values.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: values.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: values.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: values.HTTP_MAX_CONNECTIONS,
    maxConnectionsPerClient: values.HTTP_MAX_CONNECTIONS_PER_CLIENT,
    maxBodyBytes: values.HTTP_MAX_BODY_BYTES,
    maxJsonDepth: values.HTTP_MAX_JSON_DEPTH,
  }
  return Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined))
}
