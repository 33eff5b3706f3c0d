import { parseArgs } from 'node:util'
import * as schemas from '@adwire/schemas'
import { parseShape, SchemaError } from '@adwire/schemas'
import type { z } from 'zod'
import { printJson, UsageError, type Io } from '../io.js'
import { asTyped } from '../help.js'

export const schemasHelp = `usage: adwire schemas <command>

  list                         list the AdCP 3.1.19 shapes @adwire/schemas exports
  validate <SHAPE> [FILE]      validate a JSON document (FILE, or standard input when FILE is - or absent)
                               against SHAPE, e.g. Format, ListCreativeFormatsRequest, McpWebhookPayload;
                               prints {"ok":true} or {"ok":false,"code","message","issues":[{"path","message"}]}
                               and exits 0 when valid, 1 when not

options:
  -h, --help                   show this help
`

const shapeNames = (): string[] =>
  Object.keys(schemas)
    .filter((key) => key.endsWith('Schema') && !key.startsWith('A2A'))
    .map((key) => key.slice(0, -'Schema'.length))
    .sort()

function findShape(name: string): z.ZodType {
  const wanted = name.replace(/Schema$/, '').toLowerCase()
  const match = shapeNames().find((candidate) => candidate.toLowerCase() === wanted)
  if (!match) {
    const close = shapeNames()
      .filter((candidate) => candidate.toLowerCase().includes(wanted))
      .slice(0, 8)
    throw new UsageError(
      `unknown shape "${name}"${close.length ? `; did you mean ${close.join(', ')}?` : '; see `adwire schemas list`'}`,
    )
  }
  return (schemas as unknown as Record<string, z.ZodType>)[`${match}Schema`]!
}

export async function schemasCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
  })
  const [sub, ...rest] = positionals
  if (values.help || sub === undefined) {
    io.stdout(asTyped(schemasHelp))
    return sub === undefined && !values.help ? 2 : 0
  }
  if (sub === 'list') {
    io.stdout(`${shapeNames().join('\n')}\n`)
    return 0
  }
  if (sub === 'validate') {
    const [shape, file = '-'] = rest
    if (!shape)
      throw new UsageError('SHAPE is required (schemas validate SHAPE [FILE]; see `adwire schemas list`)')
    const schema = findShape(shape)
    const bytes = await io.read(file)
    let document: unknown
    try {
      document = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
    } catch (error) {
      printJson(io, {
        ok: false,
        code: 'INVALID_REQUEST',
        message: `not JSON: ${(error as Error).message}`,
        issues: [],
      })
      return 1
    }
    try {
      parseShape(schema, document, shape)
      printJson(io, { ok: true })
      return 0
    } catch (error) {
      if (!SchemaError.is(error)) throw error
      printJson(io, { ok: false, code: error.code, message: error.message, issues: error.issues })
      return 1
    }
  }
  throw new UsageError(`unknown command "schemas ${sub}"`)
}
