/**
 * The shared help and usage-error text of every command: the name the command was typed as (`adwire`, or
 * `pnpm adwire` through the workspace script), one subcommand's help cut out of its group's help, and our own
 * wording for the mistakes `node:util` parseArgs reports.
 */

/**
 * The command as the user typed it: `$ADWIRE_COMMAND` (the workspace's `pnpm adwire` script sets it to
 * `pnpm adwire`), else `adwire`.
 */
export function commandName(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const name = env.ADWIRE_COMMAND?.trim()
  return name ? name : 'adwire'
}

/** Rewrites `` `adwire …` `` in a message or help text to the command as typed (`` `pnpm adwire …` ``). */
export function asTyped(text: string, name: string = commandName()): string {
  return name === 'adwire' ? text : text.replace(/(^|[`\s(])adwire (?=[a-z<[-])/g, `$1${name} `)
}

const ENTRY = /^ {2}(\S+)/
const paragraphs = (text: string) => text.trimEnd().split(/\n\s*\n/)

/**
 * One subcommand's help out of its group's help: the usage line for `<group> <sub>`, the entries of the group
 * that describe `sub` (an entry is a line indented two spaces that starts with the subcommand, with its more
 * indented continuation lines), and the group's other paragraphs (options, exit codes). `undefined` when the
 * group help has no entry for `sub`.
 *
 * @example
 * subcommandHelp(webhookHelp, 'webhook', 'sign') // 'usage: adwire webhook sign [options]\n\n  sign --request FILE …'
 */
export function subcommandHelp(groupHelp: string, group: string, sub: string): string | undefined {
  const out: string[] = []
  let found = false
  for (const paragraph of paragraphs(groupHelp)) {
    if (paragraph.startsWith('usage:')) {
      out.push(`usage: adwire ${group} ${sub} [options]`)
      continue
    }
    const lines = paragraph.split('\n')
    if (!ENTRY.test(lines[0]!)) {
      out.push(paragraph)
      continue
    }
    const kept: string[] = []
    let inside = false
    for (const line of lines) {
      const entry = ENTRY.exec(line)
      if (entry) inside = entry[1] === sub
      if (inside) kept.push(line)
    }
    if (kept.length > 0) {
      found = true
      out.push(kept.join('\n'))
    }
  }
  return found ? `${out.join('\n\n')}\n` : undefined
}

/**
 * The subcommands a group's help describes, in order and once each (`resolve brand` and `resolve property` are
 * one `resolve`): the first word of every two-space-indented entry line.
 *
 * @example
 * subcommandsOf(webhookHelp) // ['verify', 'sign', 'hmac-sign', 'hmac-verify', 'parse']
 */
export function subcommandsOf(groupHelp: string): string[] {
  const subs: string[] = []
  for (const paragraph of paragraphs(groupHelp)) {
    if (paragraph.startsWith('usage:') || !ENTRY.test(paragraph.split('\n')[0]!)) continue
    for (const line of paragraph.split('\n')) {
      const sub = ENTRY.exec(line)?.[1]
      if (sub !== undefined && !subs.includes(sub)) subs.push(sub)
    }
  }
  return subs
}

/** Whether `argv` asks for help (`-h`/`--help` before any `--`). */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const arg of argv) {
    if (arg === '--') return false
    if (arg === '--help' || arg === '-h') return true
  }
  return false
}

/**
 * Our message for a parseArgs error (`ERR_PARSE_ARGS_*`), instead of Node's text: `unknown option --bogus`,
 * `--alg needs a value`, `--json takes no value`, `unexpected argument "x"`; `undefined` for other errors.
 */
export function parseArgsMessage(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS')) return undefined
  const message = (error as Error).message
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? ''
  const option = quoted.split(/[ ,]+/).find((part) => part.startsWith('--')) ?? quoted.split(' ')[0]
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${quoted}`
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return `unexpected argument "${quoted}"`
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    return /does not take an argument/.test(message) ? `${option} takes no value` : `${option} needs a value`
  }
  return `bad arguments (${code})`
}
