import { readFile } from 'node:fs/promises'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { printJson, UsageError, type Io } from '../io.js'
import { readSse } from '@adwire/registry-client'
import { asTyped } from '../help.js'

export const receiverHelp = `usage: adwire receiver <command> [options]

Talks to a running reference receiver of this repository (apps/receiver; \`pnpm start:receiver\`) over its
admin API.

  register --url BASE --token ADMIN_TOKEN KEYS [--shape SHAPE] [--sender SELLER] [--push-token-file FILE] [--label TEXT]
           [--publisher-domain DOMAIN] [--revocation-url URL]
                               create a webhook registration; prints {"id":"…","url":"…"} (give url to the
                               seller as push_notification_config.url)
      KEYS is one of:
        --jwks FILE                    RFC 9421 with the seller's public JWKS (a file)
        --jwks-uri URL                 RFC 9421 with keys fetched from the seller's jwks_uri
        --agent-url URL [--brand-json-url URL]
                                       RFC 9421 with keys found through the seller's brand.json
        --agent-url URL --via-capabilities [--agent-protocol mcp|a2a]
                                       RFC 9421 with keys found through the agent's get_adcp_capabilities
                                       (identity.brand_json_url, then brand.json; key_origins checked)
        --hmac-secret-file FILE        legacy HMAC-SHA256 (deprecated) with this shared secret
        --bearer-token-file FILE       legacy Bearer (deprecated) with this token
      --shape mcp|a2a|property-list|collection-list   the body shape (default: detected per delivery)
      --sender SELLER                the seller's identity (e.g. its agent URL): registrations naming the
                                     same sender share one dedup keyspace (several URLs, HMAC → RFC 9421)
      --push-token-file FILE         the push_notification_config.token deliveries must echo
      --publisher-domain DOMAIN      with --agent-url: only the keys the publisher's adagents.json
                                     signing_keys[] pins for the agent verify (when it pins any)
      --revocation-url URL           RFC 9421: the seller's key revocation list (stale or unreadable fails closed)
  events --url BASE --token ADMIN_TOKEN --registration ID [--follow] [--limit N]
                               print a registration's events, one JSON line each
                               ({"idempotency_key","operation_id","task_id","status","received_at","publications"});
                               --follow keeps printing new ones as they arrive (until interrupted)

--url and --token default to $ADWIRE_RECEIVER_URL and $ADWIRE_RECEIVER_TOKEN.
Exit codes: 0 success, 1 the receiver refused or could not be reached, 2 bad usage.
`

const connection = {
  help: { type: 'boolean', short: 'h' },
  url: { type: 'string' },
  token: { type: 'string' },
} as const satisfies ParseArgsConfig['options']

interface Target {
  readonly base: string
  readonly headers: Record<string, string>
}

function target(values: { url?: string | undefined; token?: string | undefined }): Target {
  const url = values.url ?? process.env.ADWIRE_RECEIVER_URL
  const token = values.token ?? process.env.ADWIRE_RECEIVER_TOKEN
  if (!url) throw new UsageError('--url is required (the receiver, e.g. http://127.0.0.1:4300)')
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new UsageError(`--url must be an http(s) URL, not "${url}"`)
  }
  if (!token) throw new UsageError('--token is required (the receiver ADMIN_TOKEN)')
  return { base: url.replace(/\/+$/, ''), headers: { authorization: `Bearer ${token}` } }
}

async function readText(path: string, what: string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).replace(/\r?\n$/, '')
  } catch (error) {
    throw new UsageError(`cannot read ${what} ${path}: ${(error as Error).message}`)
  }
}

/** Prints why the receiver refused (its JSON error and details) and resolves with exit code 1. */
async function refused(io: Io, response: Response): Promise<number> {
  const text = await response.text()
  let line = `HTTP ${response.status}`
  try {
    const { error } = JSON.parse(text) as { error?: { code?: string; message?: string } }
    if (error) line = `${error.message ?? ''} (${response.status} ${error.code ?? ''})`
  } catch {
    if (text) line += `: ${text.slice(0, 200)}`
  }
  io.stderr(`adwire: the receiver refused: ${line}\n`)
  return 1
}

async function call(io: Io, url: string, init: RequestInit): Promise<Response | number> {
  try {
    return await fetch(url, init)
  } catch (error) {
    io.stderr(`adwire: cannot reach ${new URL(url).origin}: ${(error as Error).message}\n`)
    return 1
  }
}

async function register(argv: string[], io: Io): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...connection,
      jwks: { type: 'string' },
      'jwks-uri': { type: 'string' },
      'brand-json-url': { type: 'string' },
      'agent-url': { type: 'string' },
      'hmac-secret-file': { type: 'string' },
      'bearer-token-file': { type: 'string' },
      shape: { type: 'string' },
      'push-token-file': { type: 'string' },
      sender: { type: 'string' },
      label: { type: 'string' },
      'publisher-domain': { type: 'string' },
      'revocation-url': { type: 'string' },
      'via-capabilities': { type: 'boolean' },
      'agent-protocol': { type: 'string' },
    },
  })
  const server = target(values)
  const sources = [
    values.jwks,
    values['jwks-uri'],
    values['agent-url'],
    values['hmac-secret-file'],
    values['bearer-token-file'],
  ]
  if (sources.filter((source) => source !== undefined).length !== 1) {
    throw new UsageError(
      'exactly one of --jwks, --jwks-uri, --agent-url, --hmac-secret-file, --bearer-token-file is required',
    )
  }
  if (values['brand-json-url'] && !values['agent-url']) {
    throw new UsageError('--brand-json-url needs --agent-url (the agents[].url the brand.json lists)')
  }
  if (values['via-capabilities'] && !values['agent-url']) {
    throw new UsageError('--via-capabilities needs --agent-url (the agent whose capabilities name its keys)')
  }
  if (values['via-capabilities'] && values['brand-json-url']) {
    throw new UsageError(
      "--via-capabilities reads brand_json_url from the agent's capabilities: drop --brand-json-url",
    )
  }
  if (values['agent-protocol'] !== undefined) {
    if (!values['via-capabilities']) throw new UsageError('--agent-protocol goes with --via-capabilities')
    if (!['mcp', 'a2a'].includes(values['agent-protocol'])) {
      throw new UsageError('--agent-protocol must be mcp or a2a')
    }
  }
  if (values['publisher-domain'] !== undefined && !values['agent-url']) {
    throw new UsageError('--publisher-domain needs --agent-url (the agent its adagents.json pins keys for)')
  }
  if (values['revocation-url'] !== undefined && (values['hmac-secret-file'] || values['bearer-token-file'])) {
    throw new UsageError('--revocation-url applies to RFC 9421 keys (--jwks, --jwks-uri, --agent-url)')
  }
  const shapes = ['mcp', 'a2a', 'property-list', 'collection-list']
  if (values.shape !== undefined && !shapes.includes(values.shape)) {
    throw new UsageError(`--shape must be one of ${shapes.join(', ')}`)
  }
  let body: Record<string, unknown>
  if (values.jwks) {
    const text = await readText(values.jwks, 'JWKS file')
    let jwks: unknown
    try {
      jwks = JSON.parse(text)
    } catch (error) {
      throw new UsageError(`${values.jwks} is not JSON: ${(error as Error).message}`)
    }
    body = { auth: 'rfc9421', jwks }
  } else if (values['jwks-uri']) body = { auth: 'rfc9421', jwks_uri: values['jwks-uri'] }
  else if (values['agent-url']) {
    body = {
      auth: 'rfc9421',
      agent_url: values['agent-url'],
      ...(values['brand-json-url'] ? { brand_json_url: values['brand-json-url'] } : {}),
      ...(values['via-capabilities'] ? { key_discovery: 'capabilities' } : {}),
      ...(values['agent-protocol'] ? { agent_protocol: values['agent-protocol'] } : {}),
    }
  } else if (values['hmac-secret-file']) {
    body = { auth: 'hmac', secret: await readText(values['hmac-secret-file'], 'secret file') }
  } else body = { auth: 'bearer', token: await readText(values['bearer-token-file']!, 'token file') }
  if (values.shape) body.shape = values.shape
  if (values.label) body.label = values.label
  if (values.sender !== undefined) body.sender = values.sender
  if (values['publisher-domain'] !== undefined) body.publisher_domain = values['publisher-domain']
  if (values['revocation-url'] !== undefined) body.revocation_url = values['revocation-url']
  if (values['push-token-file'])
    body.push_token = await readText(values['push-token-file'], 'push token file')

  const response = await call(io, `${server.base}/api/registrations`, {
    method: 'POST',
    headers: { ...server.headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (typeof response === 'number') return response
  if (response.status !== 201) return refused(io, response)
  const created = (await response.json()) as { id: string; url: string }
  printJson(io, { id: created.id, url: created.url })
  return 0
}

/** The fields `events` prints, in both modes. */
const eventLine = (event: Record<string, unknown>) => ({
  idempotency_key: event.idempotency_key,
  operation_id: event.operation_id,
  task_id: event.task_id,
  status: event.status,
  received_at: event.received_at,
  publications: event.publications,
})

async function events(argv: string[], io: Io): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...connection,
      registration: { type: 'string' },
      follow: { type: 'boolean', short: 'f' },
      limit: { type: 'string' },
    },
  })
  const server = target(values)
  if (!values.registration) throw new UsageError('--registration is required')
  if (values.limit !== undefined && !/^[1-9]\d{0,4}$/.test(values.limit)) {
    throw new UsageError('--limit must be a whole number from 1 to 10000')
  }
  const registration = encodeURIComponent(values.registration)
  if (!values.follow) {
    const limit = values.limit ? `&limit=${values.limit}` : ''
    const response = await call(io, `${server.base}/api/events?registration=${registration}${limit}`, {
      headers: server.headers,
    })
    if (typeof response === 'number') return response
    if (!response.ok) return refused(io, response)
    const { events: list } = (await response.json()) as { events: Record<string, unknown>[] }
    for (const event of list) printJson(io, eventLine(event))
    return 0
  }
  // Check the registration first: the stream would wait silently on a typo.
  const check = await call(io, `${server.base}/api/events?registration=${registration}&limit=1`, {
    headers: server.headers,
  })
  if (typeof check === 'number') return check
  if (!check.ok) return refused(io, check)
  await check.body?.cancel()
  let cursor = '0.0'
  for (;;) {
    const response = await call(io, `${server.base}/api/stream?registration=${registration}`, {
      headers: { ...server.headers, accept: 'text/event-stream', 'last-event-id': cursor },
    })
    if (typeof response !== 'number') {
      if (response.status === 401 || response.status === 403 || response.status === 400) {
        return refused(io, response)
      }
      if (response.ok && response.body) {
        try {
          for await (const message of readSse(response.body)) {
            if (message.id) cursor = message.id
            if (message.event === 'delivery') printJson(io, eventLine(JSON.parse(message.data)))
          }
        } catch {
          // The connection broke: reconnect below, resuming after the last event printed.
        }
      }
    }
    io.stderr('adwire: stream interrupted; reconnecting\n')
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
}

export async function receiverCommand(argv: string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv
  if (
    sub === undefined ||
    sub === '--help' ||
    sub === '-h' ||
    rest.includes('--help') ||
    rest.includes('-h')
  ) {
    io.stdout(asTyped(receiverHelp))
    return sub === undefined ? 2 : 0
  }
  switch (sub) {
    case 'register':
      return register(rest, io)
    case 'events':
      return events(rest, io)
    default:
      throw new UsageError(`unknown command "receiver ${sub}"`)
  }
}
