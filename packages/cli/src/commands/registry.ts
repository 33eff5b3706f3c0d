/**
 * `adwire registry …`: resolve brands and properties, check authorization, validate adagents.json and read the
 * change feed of an AdCP registry (the adwire registry or any mirror of the public one), through
 * @adwire/registry-client. The registry's admin commands (create-org) ship with the registry app: see
 * {@link REGISTRY_ADMIN_MOVED}.
 */
import { existsSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { AdagentsJsonSchema, SchemaError, parseShape } from '@adwire/schemas'
import { printJson, UsageError, type Io } from '../io.js'
import {
  clientFor,
  common,
  type CommonValues,
  domainArgument,
  refused,
  REGISTRY_ADMIN_MOVED,
  registryHelp,
} from './registry-common.js'
import { feed } from './registry-feed.js'
import { asTyped } from '../help.js'

export { DEFAULT_REGISTRY_URL, registryHelp } from './registry-common.js'

async function resolve(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: common, allowPositionals: true })
  if (values.help) {
    io.stdout(asTyped(registryHelp))
    return 0
  }
  const [kind, input, extra] = positionals
  if (kind !== 'brand' && kind !== 'property')
    throw new UsageError('"brand" or "property" is required (registry resolve brand|property DOMAIN)')
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
    io.stdout(asTyped(registryHelp))
    return 0
  }
  if (!values.agent) throw new UsageError('--agent URL is required (the agent URL)')
  if (!URL.canParse(values.agent)) throw new UsageError(`--agent must be a URL, not "${values.agent}"`)
  if ((values.publisher === undefined) === (values.identifier === undefined)) {
    throw new UsageError(
      'registry lookup needs exactly one of --publisher DOMAIN and --identifier TYPE:VALUE',
    )
  }
  if (values.publisher !== undefined) {
    return publisherLookup(values, values.agent, domainArgument(values.publisher, '--publisher'), io)
  }
  const identifier = values.identifier!
  const colon = identifier.indexOf(':')
  if (colon <= 0 || colon === identifier.length - 1) {
    throw new UsageError('--identifier is TYPE:VALUE, e.g. domain:news.example or ios_bundle:com.example.app')
  }
  const identifierType = identifier.slice(0, colon)
  const identifierValue = identifier.slice(colon + 1)
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

/**
 * Is `agent` authorized for `domain`'s properties: all, some or none, with each property listed (the
 * per-agent rollup of `GET /api/registry/publisher/authorization` and the publisher's properties).
 */
async function publisherLookup(
  values: CommonValues & { json?: boolean | undefined },
  agent: string,
  domain: string,
  io: Io,
): Promise<number> {
  try {
    const client = clientFor(values)
    const [rollup, resolved] = await Promise.all([
      client.lookupPublisherAuthorization({ domain, agent }),
      client.resolveProperty(domain),
    ])
    const denied = new Set((rollup.unauthorized_properties ?? []).map((property) => property.id))
    const properties = (resolved.properties ?? []).map((property) => ({
      id: property.id ?? property.name ?? '?',
      name: property.name,
      type: property.type,
      authorized: !denied.has(property.id ?? ''),
    }))
    const verdict =
      rollup.total > 0 && rollup.authorized === rollup.total ? 'all' : rollup.authorized > 0 ? 'some' : 'none'
    if (values.json) {
      printJson(io, {
        agent_url: agent,
        publisher_domain: domain,
        verdict,
        authorized: rollup.authorized,
        total: rollup.total,
        publisher_wide: rollup.publisher_wide,
        properties,
      })
    } else {
      const label = { all: 'authorized for all', some: 'authorized for some', none: 'NOT authorized for any' }
      io.stdout(
        `${label[verdict]} (${rollup.authorized} of ${rollup.total}) of ${domain}'s properties: ${agent}` +
          `${rollup.publisher_wide ? ' (publisher-wide)' : ''}\n`,
      )
      for (const property of properties) {
        io.stdout(
          `  ${property.authorized ? 'yes' : 'no '} ${property.id} (${property.type ?? 'unknown'})` +
            `${property.name ? ` ${property.name}` : ''}\n`,
        )
      }
    }
    return verdict === 'none' ? 1 : 0
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
    io.stdout(asTyped(registryHelp))
    return 0
  }
  const [input, extra] = positionals
  if (!input) throw new UsageError('a FILE, URL or DOMAIN is required (registry validate FILE|URL|DOMAIN)')
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
    io.stdout(asTyped(registryHelp))
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
      // The admin commands write into the registry's database, so they ship with the registry app, not here.
      throw new UsageError(REGISTRY_ADMIN_MOVED)
    default:
      throw new UsageError(`unknown command "registry ${sub}"`)
  }
}
