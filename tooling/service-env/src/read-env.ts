/** Reading a service's environment with its zod schema, and the settings every service shares. */
import type { z } from 'zod'

/** Where a service keeps its state: one SQLite file (one host) or a PostgreSQL schema (many instances). */
export type DatabaseConfig =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly connectionString: string; readonly schema: string }

/** The environment is unusable: the message lists every problem, one per line. */
export class EnvError extends Error {
  override readonly name = 'EnvError'
}

/**
 * Parses `source` with `schema`, or throws {@link EnvError} naming every bad variable (`NAME: why`, one per
 * line; values are never repeated, so secrets stay out of logs).
 *
 * @example
 * const values = readEnv(z.object(serviceFields({ name: 'registry', port: 4100 })), process.env)
 */
export function readEnv<Schema extends z.ZodType>(
  schema: Schema,
  source: Readonly<Record<string, string | undefined>>,
): z.output<Schema> {
  const parsed = schema.safeParse(source)
  if (parsed.success) return parsed.data
  const lines = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'env'}: ${issue.message}`)
  throw new EnvError(`invalid environment:\n  ${lines.join('\n  ')}`)
}

/** What {@link serviceSettings} derives from the variables of `serviceFields`. */
export interface ServiceSettings {
  readonly port: number
  /** The interface to listen on; unset: `127.0.0.1` (see `listen` in `@adwire/service-kit`). */
  readonly host?: string
  readonly database: DatabaseConfig
  /** The public base URL without trailing slashes; unset when not configured. */
  readonly publicUrl?: string
}

/**
 * The shared settings from parsed `serviceFields` variables.
 *
 * @example
 * serviceSettings({ PORT: 0, DATABASE_URL: 'sqlite:/tmp/x.sqlite', DATABASE_SCHEMA: 'adwire_x' })
 * // { port: 0, database: { kind: 'sqlite', path: '/tmp/x.sqlite' } }
 */
export function serviceSettings(values: {
  readonly PORT: number
  readonly HOST?: string | undefined
  readonly DATABASE_URL: string
  readonly DATABASE_SCHEMA: string
  readonly PUBLIC_URL?: string | undefined
}): ServiceSettings {
  const database: DatabaseConfig = values.DATABASE_URL.startsWith('sqlite:')
    ? { kind: 'sqlite', path: values.DATABASE_URL.slice('sqlite:'.length) }
    : { kind: 'postgres', connectionString: values.DATABASE_URL, schema: values.DATABASE_SCHEMA }
  return {
    port: values.PORT,
    ...(values.HOST ? { host: values.HOST } : {}),
    database,
    ...(values.PUBLIC_URL ? { publicUrl: values.PUBLIC_URL.replace(/\/+$/, '') } : {}),
  }
}
