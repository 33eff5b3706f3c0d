import { parseArgs, type ParseArgsConfig } from 'node:util'
import { signHmacWebhook, SignatureError, verifyHmacWebhook } from '@adwire/http-signatures'
import { parseWebhookPayload, SchemaError } from '@adwire/schemas'
import { printJson, UsageError, type Io } from '../io.js'
import { parseNow, readRequestFile } from '../request-file.js'
import { readFile } from 'node:fs/promises'
import { signatureCommands } from './signature.js'
import { asTyped } from '../help.js'

export const webhookHelp = `usage: adwire webhook <command> [options]

  verify --request FILE --jwks FILE [--now S] [--replayed KEYID:NONCE]… [--revoked KID]…
                               verify an RFC 9421 webhook signature (AdCP webhook profile); prints
                               {"ok":true,"keyid":"…"} or {"ok":false,"code":"webhook_…","message":"…"}
  sign --request FILE --key PRIVATE_JWK_FILE [--now S]
                               print the request with Content-Digest, Signature-Input and Signature added
  hmac-sign --request FILE --secret-file FILE [--now S]
                               legacy HMAC-SHA256 (deprecated): print the request with X-ADCP-Signature and
                               X-ADCP-Timestamp added
  hmac-verify --request FILE --secret-file FILE [--now S]
                               legacy HMAC-SHA256 (deprecated): verify; prints {"ok":true} or {"ok":false,…}
  parse [FILE] [--format mcp|a2a] [--validate]
                               tell MCP from A2A shape and print the AdCP data a webhook carries

FILE is JSON {"method","url","headers":{…},"body":"…"} (the request object of an AdCP vector); - reads
standard input. Exit codes: 0 accepted, 1 rejected, 2 bad usage or unreadable input (message on stderr).
`

const common = { help: { type: 'boolean', short: 'h' } } as const satisfies ParseArgsConfig['options']

async function readSecret(path: string | undefined): Promise<string> {
  if (!path) throw new UsageError('--secret-file is required')
  try {
    return (await readFile(path, 'utf8')).replace(/\r?\n$/, '')
  } catch (error) {
    throw new UsageError(`cannot read secret file ${path}: ${(error as Error).message}`)
  }
}

async function hmac(sub: 'hmac-sign' | 'hmac-verify', argv: string[], io: Io): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...common,
      request: { type: 'string' },
      'secret-file': { type: 'string' },
      now: { type: 'string' },
    },
  })
  if (!values.request) throw new UsageError('--request is required')
  const request = await readRequestFile(io, values.request)
  const secret = await readSecret(values['secret-file'])
  const now = parseNow(values.now)
  if (sub === 'hmac-sign') {
    try {
      const headers = await signHmacWebhook(request.body, { secret, ...(now === undefined ? {} : { now }) })
      printJson(io, { ...request, headers: { ...request.headers, ...headers } })
      return 0
    } catch (error) {
      if (!SignatureError.is(error)) throw error
      if (error.code === 'duplicate_key_input') {
        printJson(io, { ok: false, code: error.code, message: error.message })
        return 1
      }
      throw new UsageError(error.message)
    }
  }
  try {
    await verifyHmacWebhook(
      { headers: request.headers, body: request.body },
      { secret, ...(now === undefined ? {} : { now }) },
    )
    printJson(io, { ok: true })
    return 0
  } catch (error) {
    if (!SignatureError.is(error)) throw error
    if (error.code === 'webhook_credential_invalid') throw new UsageError(error.message)
    printJson(io, { ok: false, code: error.code, message: error.message })
    return 1
  }
}

async function parse(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { ...common, format: { type: 'string' }, validate: { type: 'boolean' } },
    allowPositionals: true,
  })
  const [file = '-'] = positionals
  if (values.format !== undefined && values.format !== 'mcp' && values.format !== 'a2a') {
    throw new UsageError(`--format must be mcp or a2a, not "${values.format}"`)
  }
  const format = values.format as 'mcp' | 'a2a' | undefined
  try {
    const parsed = parseWebhookPayload(await io.read(file), {
      ...(format ? { format } : {}),
      validate: values.validate ?? false,
    })
    printJson(io, {
      ok: true,
      format: parsed.format,
      kind: parsed.format === 'a2a' ? parsed.kind : 'envelope',
      task_id: parsed.taskId,
      status: parsed.status,
      terminal: parsed.terminal,
      data: parsed.data,
    })
    return 0
  } catch (error) {
    if (!SchemaError.is(error)) throw error
    printJson(io, { ok: false, code: error.code, message: error.message })
    return 1
  }
}

export async function webhookCommand(argv: string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv
  if (sub === undefined || sub === '--help' || sub === '-h') {
    io.stdout(asTyped(webhookHelp))
    return sub === undefined ? 2 : 0
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout(asTyped(webhookHelp))
    return 0
  }
  switch (sub) {
    case 'parse':
      return parse(rest, io)
    case 'hmac-sign':
    case 'hmac-verify':
      return hmac(sub, rest, io)
    case 'verify':
    case 'sign':
      return signatureCommands.webhook[sub](rest, io)
    default:
      throw new UsageError(`unknown command "webhook ${sub}"`)
  }
}
