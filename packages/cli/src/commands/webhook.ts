import { parseArgs } from 'node:util'
import { parseWebhookPayload, SchemaError } from '@adwire/schemas'
import { printJson, UsageError, type Io } from '../io.js'

export const webhookHelp = `usage: adwire webhook <command>

  parse [FILE]                 read a webhook body (FILE, or standard input when FILE is - or absent), tell
                               MCP shape from A2A shape and print one JSON line:
                               {"ok":true,"format","kind","task_id","status","terminal","data"}
                               or {"ok":false,"code","message"}; exits 0 or 1

options:
  --format mcp|a2a             the shape the registration promised (detection from the body otherwise)
  --validate                   also validate an MCP envelope against core/mcp-webhook-payload.json
  -h, --help                   show this help
`

export async function webhookCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      help: { type: 'boolean', short: 'h' },
      format: { type: 'string' },
      validate: { type: 'boolean' },
    },
    allowPositionals: true,
  })
  const [sub, file = '-'] = positionals
  if (values.help || sub === undefined) {
    io.stdout(webhookHelp)
    return sub === undefined && !values.help ? 2 : 0
  }
  if (sub !== 'parse') throw new UsageError(`unknown command "webhook ${sub}"`)
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
