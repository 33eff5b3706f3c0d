/**
 * `adwire registry …`: resolve brands and properties, check authorization, validate adagents.json and read the
 * change feed of an AdCP registry (the adwire registry or any mirror of the public one), through
 * @adwire/registry-client. `registry admin …` runs the registry app's admin script (a checkout only).
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import {
  createRegistryClient,
  CursorExpiredError,
  followFeed,
  RegistryError,
  type CursorStore,
  type RegistryClient,
  type RegistryFeedEvent,
} from '@adwire/registry-client'
import { AdagentsJsonSchema, SchemaError, parseShape } from '@adwire/schemas'
import { printJson, UsageError, type Io } from '../io.js'

export const DEFAULT_REGISTRY_URL = 'http://127.0.0.1:4100'

export const registryHelp = `usage: adwire registry <command> [options]

Talks to an AdCP registry (the adwire registry, \`pnpm start:registry\`, or a mirror of the public one).

  resolve brand DOMAIN         the canonical brand of an advertiser domain
  resolve property DOMAIN      a publisher domain's properties and authorized agents
  lookup --agent URL (--publisher DOMAIN | --identifier TYPE:VALUE)
                               may this agent sell this inventory? exits 0 when authorized, 1 when not
  validate FILE|URL|DOMAIN     validate an adagents.json: a local FILE against the AdCP 3.1.19 schema
                               (offline), a URL or DOMAIN by the registry fetching /.well-known/adagents.json
  feed [--follow] [--stream] [--cursor-file F] [--types T] [--limit N] [--interval SECONDS]
                               print change-feed events, one JSON line each (needs an API key or token);
                               without --follow, stops when caught up; --cursor-file resumes from and saves
                               the last event id; --types is comma-separated, globs end in * (authorization.*)
  admin create-org --name NAME write an organization into the registry's database (DATABASE_URL, as the
                               service) and print its API key once; runs inside a checkout with apps/registry

options:
  --url URL                    the registry (default $ADWIRE_REGISTRY_URL or ${DEFAULT_REGISTRY_URL})
  --api-key KEY                an organization API key (sk_…) or access token (default $ADWIRE_REGISTRY_API_KEY)
  --json                       print the registry's JSON answer instead of a summary
  -h, --help                   show this help

Exit codes: 0 success, 1 refused, not found, not authorized or invalid, 2 bad usage.
`

const common = {
  help: { type: 'boolean', short: 'h' },
  url: { type: 'string' },
  'api-key': { type: 'string' },
  json: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options']

interface CommonValues {
  url?: string | undefined
  'api-key'?: string | undefined
}

function clientFor(values: CommonValues): RegistryClient {
  const url = values.url ?? process.env.ADWIRE_REGISTRY_URL ?? DEFAULT_REGISTRY_URL
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new UsageError(`--url must be an http(s) URL, not "${url}"`)
  }
  const apiKey = values['api-key'] ?? process.env.ADWIRE_REGISTRY_API_KEY
  return createRegistryClient({ baseUrl: url, ...(apiKey ? { apiKey } : {}) })
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$|^localhost$/i

function domainArgument(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`${what} needs a DOMAIN`)
  const domain = value.trim().toLowerCase()
  if (!DOMAIN.test(domain)) throw new UsageError(`"${value}" is not a domain name (e.g. example.com)`)
  return domain
}

/** Prints a registry refusal (or unreachable registry) and resolves with exit code 1. */
function refused(io: Io, error: unknown): number {
  if (error instanceof RegistryError) {
    const where = error.status === 0 ? '' : ` (HTTP ${error.status} ${error.code})`
    io.stderr(`adwire: ${error.message}${where}\n`)
    if (error.status === 401) io.stderr('adwire: this call needs --api-key (or $ADWIRE_REGISTRY_API_KEY)\n')
    return 1
  }
  throw error
}

async function resolve(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: common, allowPositionals: true })
  if (values.help) {
    io.stdout(registryHelp)
    return 0
  }
  const [kind, input, extra] = positionals
  if (kind !== 'brand' && kind !== 'property')
    throw new UsageError('registry resolve needs "brand" or "property"')
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`)
  const domain = domainArgument(input, `registry resolve ${kind}`)
  const client = clientFor(values)
  try {
    if (kind === 'brand') {
      const brand = await client.resolveBrand(domain)
      if (values.json) printJson(io, brand)
      else {
        const house =
          brand.house_domain && brand.house_domain !== brand.canonical_domain
            ? `, house ${brand.house_domain}`
            : ''
        io.stdout(
          `${domain}: ${brand.brand_name} (canonical ${brand.canonical_domain}${house}, source ${brand.source})\n`,
        )
      }
      return 0
    }
    const property = await client.resolveProperty(domain)
    if (values.json) printJson(io, property)
    else {
      io.stdout(
        `${property.publisher_domain}: ${property.properties?.length ?? 0} properties, ` +
          `${property.authorized_agents?.length ?? 0} authorized agents (source ${property.source}` +
          `${property.verified ? ', verified' : ''})\n`,
      )
      for (const agent of property.authorized_agents ?? []) {
        io.stdout(`  agent ${agent.url}${agent.authorized_for ? ` — ${agent.authorized_for}` : ''}\n`)
      }
      for (const item of property.properties ?? []) {
        const identifiers = (item.identifiers ?? []).map((id) => `${id.type}:${id.value}`).join(', ')
        io.stdout(`  property ${item.id ?? item.name ?? '?'} (${item.type ?? 'unknown'}) ${identifiers}\n`)
      }
    }
    return 0
  } catch (error) {
    return refused(io, error)
  }
}

async function lookup(argv: string[], io: Io): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...common,
      agent: { type: 'string' },
      publisher: { type: 'string' },
      identifier: { type: 'string' },
    },
  })
  if (values.help) {
    io.stdout(registryHelp)
    return 0
  }
  if (!values.agent || !URL.canParse(values.agent))
    throw new UsageError('registry lookup needs --agent URL (the agent URL)')
  if ((values.publisher === undefined) === (values.identifier === undefined)) {
    throw new UsageError(
      'registry lookup needs exactly one of --publisher DOMAIN and --identifier TYPE:VALUE',
    )
  }
  let identifierType = 'domain'
  let identifierValue: string
  if (values.identifier !== undefined) {
    const colon = values.identifier.indexOf(':')
    if (colon <= 0 || colon === values.identifier.length - 1) {
      throw new UsageError(
        '--identifier is TYPE:VALUE, e.g. domain:news.example or ios_bundle:com.example.app',
      )
    }
    identifierType = values.identifier.slice(0, colon)
    identifierValue = values.identifier.slice(colon + 1)
  } else {
    identifierValue = domainArgument(values.publisher, '--publisher')
  }
  try {
    const answer = await clientFor(values).checkPropertyAuthorization({
      agent_url: values.agent,
      identifier_type: identifierType,
      identifier_value: identifierValue,
    })
    if (values.json) printJson(io, answer)
    else {
      io.stdout(
        `${answer.authorized ? 'authorized' : 'NOT authorized'}: ${values.agent} for ${identifierType}:${identifierValue}\n`,
      )
    }
    return answer.authorized ? 0 : 1
  } catch (error) {
    return refused(io, error)
  }
}

interface Issue {
  field?: string
  message: string
  suggestion?: string
}

async function validate(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: common, allowPositionals: true })
  if (values.help) {
    io.stdout(registryHelp)
    return 0
  }
  const [input, extra] = positionals
  if (!input) throw new UsageError('registry validate needs a FILE, URL or DOMAIN')
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`)
  const isUrl = /^https?:\/\//i.test(input)
  if (!isUrl && (input === '-' || existsSync(input) || input.endsWith('.json'))) {
    return validateFile(input, values.json === true, io)
  }
  const domain = isUrl ? new URL(input).hostname : domainArgument(input, 'registry validate')
  try {
    const answer = await clientFor(values).validateAdagents(domain)
    if (values.json) {
      printJson(io, answer)
      return (answer.data.validation as { valid?: boolean } | undefined)?.valid ? 0 : 1
    }
    const validation = (answer.data.validation ?? {}) as {
      valid?: boolean
      url?: string
      errors?: Issue[]
      warnings?: Issue[]
    }
    io.stdout(
      `${validation.url ?? domain}: ${validation.valid ? 'valid' : 'INVALID'}` +
        `${answer.data.found ? '' : ' (no adagents.json found)'}\n`,
    )
    printIssues(io, validation.errors, 'error')
    printIssues(io, validation.warnings, 'warning')
    return validation.valid ? 0 : 1
  } catch (error) {
    return refused(io, error)
  }
}

function printIssues(io: Io, issues: Issue[] | undefined, label: string): void {
  for (const issue of issues ?? []) {
    const field = issue.field ? `${issue.field}: ` : ''
    const hint = issue.suggestion ? ` (${issue.suggestion})` : ''
    io.stdout(`  ${label} ${field}${issue.message}${hint}\n`)
  }
}

async function validateFile(file: string, json: boolean, io: Io): Promise<number> {
  let document: unknown
  try {
    const bytes = await io.read(file)
    document = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') throw error
    const message = `not JSON: ${(error as Error).message}`
    if (json) printJson(io, { valid: false, file, errors: [{ field: '', message }] })
    else io.stdout(`${file}: INVALID\n  error ${message}\n`)
    return 1
  }
  try {
    parseShape(AdagentsJsonSchema, document, 'adagents.json')
    if (json) printJson(io, { valid: true, file, errors: [] })
    else io.stdout(`${file}: valid (AdCP 3.1.19 adagents.json schema)\n`)
    return 0
  } catch (error) {
    if (!SchemaError.is(error)) throw error
    const errors = error.issues.map((issue) => ({ field: issue.path, message: issue.message }))
    if (json) printJson(io, { valid: false, file, errors })
    else {
      io.stdout(`${file}: INVALID (AdCP 3.1.19 adagents.json schema)\n`)
      printIssues(io, errors, 'error')
    }
    return 1
  }
}

async function feed(argv: string[], io: Io, signal?: AbortSignal): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      ...common,
      follow: { type: 'boolean', short: 'f' },
      stream: { type: 'boolean' },
      'cursor-file': { type: 'string' },
      cursor: { type: 'string' },
      types: { type: 'string' },
      limit: { type: 'string' },
      interval: { type: 'string' },
    },
    allowPositionals: true,
  })
  if (values.help) {
    io.stdout(registryHelp)
    return 0
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`)
  if (values.stream && !values.follow) throw new UsageError('--stream goes with --follow')
  const limit = values.limit === undefined ? undefined : Number(values.limit)
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 10_000)) {
    throw new UsageError('--limit is an integer from 1 to 10000')
  }
  const interval = values.interval === undefined ? 15 : Number(values.interval)
  if (!Number.isFinite(interval) || interval <= 0) throw new UsageError('--interval is a number of seconds')
  const types = values.types
    ?.split(',')
    .map((type) => type.trim())
    .filter(Boolean)
  for (const type of types ?? []) {
    if (!/^[a-z][a-z0-9_.]*\*?$/.test(type)) throw new UsageError(`invalid --types item "${type}"`)
  }
  const cursorFile = values['cursor-file']
  const client = clientFor(values)
  const cursorStore: CursorStore = {
    load: async () => {
      if (values.cursor !== undefined) return values.cursor
      if (!cursorFile) return null
      try {
        return (await readFile(cursorFile, 'utf8')).trim() || null
      } catch (error) {
        if ((error as { code?: string }).code === 'ENOENT') return null
        throw error
      }
    },
    save: async (cursor) => {
      if (cursorFile) await writeFile(cursorFile, `${cursor ?? ''}\n`)
    },
  }
  const onEvent = (event: RegistryFeedEvent) => printJson(io, event)
  const controller = new AbortController()
  const stop = () => controller.abort()
  signal?.addEventListener('abort', stop, { once: true })
  if (values.follow) {
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  }
  try {
    if (values.follow) {
      await followFeed({
        client,
        cursorStore,
        ...(types ? { types: types.join(',') } : {}),
        ...(limit !== undefined ? { limit } : {}),
        mode: values.stream ? 'stream' : 'poll',
        pollIntervalMs: interval * 1000,
        signal: controller.signal,
        onEvent,
        onRetry: (error, delay) =>
          io.stderr(`adwire: ${error.message}; retrying in ${Math.max(1, Math.round(delay / 1000))} s\n`),
      })
      return 0
    }
    // One pass: pull pages until the registry says there is nothing more.
    let cursor = (await cursorStore.load()) || null
    for (;;) {
      const page = await client.getFeed({
        cursor,
        ...(types ? { types: types.join(',') } : {}),
        ...(limit !== undefined ? { limit } : {}),
      })
      for (const event of page.events) {
        onEvent(event)
        cursor = event.event_id
      }
      if (page.cursor) cursor = page.cursor
      await cursorStore.save(cursor)
      if (!page.has_more || page.events.length === 0) return 0
    }
  } catch (error) {
    if (error instanceof CursorExpiredError) {
      io.stderr(
        `adwire: the registry no longer knows the cursor ${error.cursor ?? ''} (HTTP 410 cursor_expired).\n` +
          `adwire: re-sync what you mirror, then ${cursorFile ? `delete ${cursorFile} and ` : ''}` +
          'run again to start from the oldest retained event.\n',
      )
      return 1
    }
    return refused(io, error)
  } finally {
    signal?.removeEventListener('abort', stop)
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
  }
}

/** The workspace root holding apps/registry, searched from the working directory and from this file. */
export function findRegistryCheckout(
  starts: readonly string[] = [process.cwd(), path.dirname(fileURLToPath(import.meta.url))],
): string | undefined {
  for (const start of starts) {
    let dir = path.resolve(start)
    for (;;) {
      if (
        existsSync(path.join(dir, 'pnpm-workspace.yaml')) &&
        existsSync(path.join(dir, 'apps/registry/package.json'))
      ) {
        return dir
      }
      const parent = path.dirname(dir)
      if (parent === dir) break
      dir = parent
    }
  }
  return undefined
}

/**
 * How to run the registry's admin script: the built `apps/registry/dist/auth/admin-cli.js`, or else its source
 * through the app's tsx. `undefined` outside a checkout with the registry app.
 */
export function adminScriptCommand(root: string | undefined): string[] | undefined {
  if (!root) return undefined
  const built = path.join(root, 'apps/registry/dist/auth/admin-cli.js')
  if (existsSync(built)) return [built]
  const source = path.join(root, 'apps/registry/src/auth/admin-cli.ts')
  if (!existsSync(source)) return undefined
  try {
    const tsx = createRequire(path.join(root, 'apps/registry/package.json')).resolve('tsx')
    return ['--import', pathToFileURL(tsx).href, source]
  } catch {
    return undefined
  }
}

async function admin(argv: string[], io: Io): Promise<number> {
  const root = findRegistryCheckout()
  const command = adminScriptCommand(root)
  if (!command || !root) {
    io.stderr(
      'adwire: the registry admin commands write into the registry database directly, so they run inside a\n' +
        'checkout of adwire that contains the registry app (apps/registry; build it with `pnpm build`).\n',
    )
    return 1
  }
  // Without DATABASE_URL, the service's default database is relative to the app's folder, where
  // `pnpm start:registry` runs it: run there so that both mean the same file.
  const child = spawn(process.execPath, [...command, ...argv], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: process.env,
    cwd: process.env.DATABASE_URL ? process.cwd() : path.join(root, 'apps/registry'),
  })
  child.stdout.setEncoding('utf8').on('data', (text: string) => io.stdout(text))
  child.stderr.setEncoding('utf8').on('data', (text: string) => io.stderr(text))
  return new Promise<number>((resolve) => {
    child.on('error', (error) => {
      io.stderr(`adwire: cannot run the registry admin script: ${error.message}\n`)
      resolve(1)
    })
    child.on('close', (code) => resolve(code ?? 1))
  })
}

/**
 * `adwire registry …`; resolves with the exit code. `signal` stops `feed --follow` (tests; the command line uses
 * SIGINT/SIGTERM).
 */
export async function registryCommand(
  argv: string[],
  io: Io,
  options: { signal?: AbortSignal } = {},
): Promise<number> {
  const [sub, ...rest] = argv
  if (sub === undefined || sub === '-h' || sub === '--help') {
    io.stdout(registryHelp)
    return sub === undefined ? 2 : 0
  }
  switch (sub) {
    case 'resolve':
      return resolve(rest, io)
    case 'lookup':
      return lookup(rest, io)
    case 'validate':
      return validate(rest, io)
    case 'feed':
      return feed(rest, io, options.signal)
    case 'admin':
      if (rest[0] === undefined || rest[0] === '-h' || rest[0] === '--help') {
        io.stdout(registryHelp)
        return rest[0] === undefined ? 2 : 0
      }
      return admin(rest, io)
    default:
      throw new UsageError(`unknown command "registry ${sub}"`)
  }
}
