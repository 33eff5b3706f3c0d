/** What the `adwire registry` commands share: the help text, the common options, the client, refusals. */
import type { ParseArgsConfig } from 'node:util'
import { createRegistryClient, RegistryError, type RegistryClient } from '@adwire/registry-client'
import { UsageError, type Io } from '../io.js'

export const DEFAULT_REGISTRY_URL = 'http://127.0.0.1:4100'

/**
 * What `adwire registry admin` answers: organizations are created by the registry app's own admin entry,
 * which writes into its database (this CLI works from npm and never reaches into an app).
 */
export const REGISTRY_ADMIN_MOVED =
  'the registry admin commands ship with the registry app, which writes into its own database: in a checkout, ' +
  'run `pnpm --filter @adwire/app-registry admin create-org --name NAME` (see the registry app README)'

export const registryHelp = `usage: adwire registry <command> [options]

Talks to an AdCP registry (this repository's, \`pnpm start:registry\`, or a mirror of the public one).

  resolve brand DOMAIN         the canonical brand of an advertiser domain
  resolve property DOMAIN      a publisher domain's properties and authorized agents
  lookup --agent URL (--publisher DOMAIN | --identifier TYPE:VALUE)
                               may this agent sell this inventory? --publisher answers all, some or none
                               of the publisher's properties, listing each; exits 0 when authorized (for
                               some or all), 1 when not
  validate FILE|URL|DOMAIN     validate an adagents.json: a local FILE against the AdCP 3.1.19 schema
                               (offline), a URL or DOMAIN by the registry fetching /.well-known/adagents.json
  feed [--follow] [--stream] [--cursor-file F] [--types T] [--limit N] [--interval SECONDS]
                               print change-feed events, one JSON line each (needs an API key or token);
                               without --follow, stops when caught up; --cursor-file resumes from and saves
                               the last event id; --types is comma-separated, globs end in * (authorization.*)

options:
  --url URL                    the registry (default $ADWIRE_REGISTRY_URL or ${DEFAULT_REGISTRY_URL})
  --api-key KEY                an organization API key (sk_…) or access token (default $ADWIRE_REGISTRY_API_KEY)
  --json                       print the registry's JSON answer instead of a summary
  -h, --help                   show this help

Exit codes: 0 success, 1 refused, not found, not authorized or invalid, 2 bad usage.
`

export const common = {
  help: { type: 'boolean', short: 'h' },
  url: { type: 'string' },
  'api-key': { type: 'string' },
  json: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options']

export interface CommonValues {
  url?: string | undefined
  'api-key'?: string | undefined
}

export function clientFor(values: CommonValues): RegistryClient {
  const url = values.url ?? process.env.ADWIRE_REGISTRY_URL ?? DEFAULT_REGISTRY_URL
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new UsageError(`--url must be an http(s) URL, not "${url}"`)
  }
  const apiKey = values['api-key'] ?? process.env.ADWIRE_REGISTRY_API_KEY
  return createRegistryClient({ baseUrl: url, ...(apiKey ? { apiKey } : {}) })
}

export const DOMAIN =
  /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$|^localhost$/i

export function domainArgument(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`DOMAIN is required (${what} DOMAIN)`)
  const domain = value.trim().toLowerCase()
  if (!DOMAIN.test(domain)) throw new UsageError(`"${value}" is not a domain name (e.g. example.com)`)
  return domain
}

/** Prints a registry refusal (or unreachable registry) and resolves with exit code 1. */
export function refused(io: Io, error: unknown): number {
  if (error instanceof RegistryError) {
    const where = error.status === 0 ? '' : ` (HTTP ${error.status} ${error.code})`
    io.stderr(`adwire: ${error.message}${where}\n`)
    if (error.status === 401) io.stderr('adwire: this call needs --api-key (or $ADWIRE_REGISTRY_API_KEY)\n')
    if (error.retryAfter !== undefined)
      io.stderr(`adwire: the registry asks to retry in ${error.retryAfter} s\n`)
    return 1
  }
  throw error
}
