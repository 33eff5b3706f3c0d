import { parseArgs } from 'node:util'
import { SignatureError } from '@adwire/http-signatures'
import { keysCommand, keysHelp } from './commands/keys.js'
import { explainCommand, requestCommand, requestHelp } from './commands/request.js'
import { receiverCommand, receiverHelp } from './commands/receiver.js'
import { registryCommand, registryHelp } from './commands/registry.js'
import { schemasCommand, schemasHelp } from './commands/schemas.js'
import { storyboardCommand, storyboardHelp } from './commands/storyboard.js'
import { webhookCommand, webhookHelp } from './commands/webhook.js'
import { asTyped, commandName, parseArgsMessage, subcommandHelp, subcommandsOf, wantsHelp } from './help.js'
import { processIo, UsageError, type Io } from './io.js'
import { version } from './version.js'

export const mainHelp = `adwire ${version}: tools for AdCP, the Ad Context Protocol

usage: adwire <command> [options]

commands:
  webhook verify|sign          RFC 9421 webhook signatures (AdCP webhook profile)
  webhook hmac-verify|hmac-sign  the deprecated HMAC-SHA256 webhook scheme
  webhook parse FILE           tell MCP from A2A shape and extract a webhook's AdCP data
  request verify|sign          RFC 9421 request signatures (AdCP request profile 3.1 and 3.2)
  explain                      run the verifier checklist step by step and show the signature base
  keys generate                create an Ed25519 or ES256 signing key and the JWKS to publish
  receiver register|events     create registrations on and tail events from a reference receiver
  registry resolve|lookup|validate|feed
                               query an AdCP registry: brands, properties, authorization, adagents.json,
                               the change feed
  storyboard list|show|run     the AdCP 3.1.19 compliance storyboards: list them, show one, run them against an
                               agent over MCP or A2A
  schemas list                 list the AdCP 3.1.19 shapes
  schemas validate SHAPE FILE  validate a JSON document against a shape

options:
  -h, --help                   show help (also after any command: adwire schemas --help)
  -v, --version                print the version

Exit codes: 0 success, 1 the input was rejected, 2 a usage error.
`

const commands: Record<string, (argv: string[], io: Io) => Promise<number>> = {
  explain: explainCommand,
  keys: keysCommand,
  receiver: receiverCommand,
  registry: registryCommand,
  request: requestCommand,
  schemas: schemasCommand,
  storyboard: storyboardCommand,
  webhook: webhookCommand,
}

/** The help of each command that has subcommands: `adwire <command> <sub> --help` prints the sub's part. */
const groupHelp: Record<string, string> = {
  keys: keysHelp,
  receiver: receiverHelp,
  registry: registryHelp,
  request: requestHelp,
  schemas: schemasHelp,
  storyboard: storyboardHelp,
  webhook: webhookHelp,
}

/**
 * Every command the CLI runs, as typed after `adwire`: a command with subcommands once per subcommand its help
 * describes (`webhook sign`, `registry feed`), a command without them alone (`explain`).
 *
 * @example
 * commandList() // ['explain', 'keys generate', 'receiver register', …]
 */
export function commandList(): string[] {
  return Object.keys(commands).flatMap((command) => {
    const help = groupHelp[command]
    return help === undefined ? [command] : subcommandsOf(help).map((sub) => `${command} ${sub}`)
  })
}

/**
 * Runs the `adwire` command line and resolves with its exit code.
 *
 * @example
 * process.exitCode = await run(process.argv.slice(2))
 */
export async function run(argv: readonly string[], io: Io = processIo): Promise<number> {
  const [first, ...rest] = argv
  const name = commandName()
  const sub = rest[0] !== undefined && !rest[0].startsWith('-') ? rest[0] : undefined
  try {
    if (first === undefined || first.startsWith('-')) {
      const { values } = parseArgs({
        args: [...argv],
        options: { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' } },
      })
      if (values.version) {
        io.stdout(`${version}\n`)
        return 0
      }
      io.stdout(asTyped(mainHelp, name))
      return values.help ? 0 : 2
    }
    const command = commands[first]
    if (!command) throw new UsageError(`unknown command "${first}"`)
    const group = groupHelp[first]
    if (group !== undefined && sub !== undefined && wantsHelp(rest)) {
      const help = subcommandHelp(group, first, sub)
      if (help !== undefined) {
        io.stdout(asTyped(help, name))
        return 0
      }
    }
    return await command(rest, io)
  } catch (error) {
    const parseMessage = parseArgsMessage(error)
    if (error instanceof UsageError || parseMessage !== undefined) {
      // The hint names the command as typed, down to the subcommand whose help explains the mistake.
      const known = first !== undefined && commands[first] !== undefined
      const helpFor = !known
        ? `${name} --help`
        : sub !== undefined && groupHelp[first] !== undefined && subcommandHelp(groupHelp[first], first, sub)
          ? `${name} ${first} ${sub} --help`
          : `${name} ${first} --help`
      const message = asTyped(parseMessage ?? (error as Error).message, name)
      io.stderr(`adwire: ${message}\nRun \`${helpFor}\` for usage.\n`)
      return 2
    }
    if (SignatureError.is(error)) {
      io.stderr(`adwire: ${error.message} (${error.code})\n`)
      return 2
    }
    if ((error as { code?: string }).code === 'ENOENT') {
      io.stderr(`adwire: ${(error as Error).message}\n`)
      return 2
    }
    throw error
  }
}
