import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { asTyped, commandName, parseArgsMessage, subcommandHelp } from './help.js'
import { commandList } from './cli.js'
import { run, type Io } from './index.js'

const folder = mkdtempSync(path.join(tmpdir(), 'adwire-cli-help-'))

async function adwire(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const io: Io = {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    read: async (file) => readFileSync(file),
  }
  const code = await run(argv, io)
  return { code, stdout, stderr }
}

const previous = process.env.ADWIRE_COMMAND
afterEach(() => {
  if (previous === undefined) delete process.env.ADWIRE_COMMAND
  else process.env.ADWIRE_COMMAND = previous
})

describe('adwire <command> <sub> --help', () => {
  it.each([
    ['webhook', 'sign', /^ {2}sign --request FILE --key/m, /^ {2}(verify|hmac-sign|parse)\b/m],
    ['webhook', 'verify', /^ {2}verify --request FILE --jwks/m, /^ {2}(sign|hmac-verify)\b/m],
    ['request', 'sign', /^ {2}sign\b/m, /^ {2}verify\b/m],
    ['registry', 'resolve', /^ {2}resolve property DOMAIN/m, /^ {2}(lookup|feed|validate)\b/m],
    ['registry', 'feed', /^ {2}feed \[--follow\]/m, /^ {2}resolve\b/m],
    ['receiver', 'events', /^ {2}events --url BASE/m, /^ {2}register\b/m],
    ['schemas', 'validate', /^ {2}validate <SHAPE>/m, /^ {2}list\b/m],
    ['keys', 'generate', /^ {2}generate\b/m, /^ {2}rotate\b/m],
  ])('adwire %s %s --help prints that subcommand only', async (group, sub, own, other) => {
    for (const flag of ['--help', '-h']) {
      const result = await adwire(group, sub, flag)
      expect(result.code).toBe(0)
      expect(result.stdout).toMatch(new RegExp(`^usage: adwire ${group} ${sub} `))
      expect(result.stdout).toMatch(own)
      expect(result.stdout).not.toMatch(other)
      expect(result.stderr).toBe('')
    }
  })

  it('keeps the group help for the group and for an unknown subcommand', async () => {
    expect((await adwire('webhook', '--help')).stdout).toMatch(/^ {2}verify[\s\S]*^ {2}sign/m)
    expect(subcommandHelp('usage: adwire x <command>\n\n  a  first\n  b  second\n', 'x', 'c')).toBeUndefined()
  })
})

describe('group help and subcommand help', () => {
  const groups = [...new Set(commandList().map((command) => command.split(' ')[0]!))]

  it.each(['adwire', 'pnpm adwire'])('name the command the same way, as typed (%s)', async (typed) => {
    process.env.ADWIRE_COMMAND = typed
    const escaped = typed.replace(' ', '\\s')
    const main = (await adwire('--help')).stdout
    expect(main).toMatch(new RegExp(`^usage: ${escaped} <command>`, 'm'))
    // Prose never reads as a command: every "adwire" word in the help is the command as typed.
    const stray = (text: string) =>
      typed === 'adwire' ? text.match(/pnpm adwire/g) : text.match(/(?<!pnpm |[@/\w-])adwire(?![\w-]| \d)/g)
    expect(stray(main)).toBeNull()
    for (const command of commandList()) {
      const [group, sub] = command.split(' ')
      const groupHelp = await adwire(group!, '--help')
      expect(groupHelp.code).toBe(0)
      expect(groupHelp.stdout, `${group} --help`).toMatch(new RegExp(`^usage: ${escaped} ${group} `))
      expect(stray(groupHelp.stdout), `${group} --help`).toBeNull()
      if (sub === undefined) continue
      const subHelp = await adwire(group!, sub, '--help')
      expect(subHelp.stdout, `${command} --help`).toMatch(new RegExp(`^usage: ${escaped} ${group} ${sub} `))
      expect(stray(subHelp.stdout), `${command} --help`).toBeNull()
    }
    expect(groups.length).toBeGreaterThan(5)
  })
})

describe('usage errors', () => {
  it.each([
    [['keys', 'generate', '--kid', 'k'], '--alg is required'],
    [['keys', 'generate', '--alg', 'ed25519'], '--kid is required'],
    [['webhook', 'sign'], '--request is required'],
    [['schemas', 'validate'], 'SHAPE is required'],
    [['registry', 'lookup', '--publisher', 'a.example'], '--agent URL is required'],
    [['registry', 'resolve'], '"brand" or "property" is required'],
    [['registry', 'resolve', 'brand'], 'DOMAIN is required'],
    [['registry', 'validate'], 'a FILE, URL or DOMAIN is required'],
  ])('a missing argument says "is required": %j', async (argv, message) => {
    const result = await adwire(...argv)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(message)
  })

  it('answers an unknown option, a missing value and a stray value in our words, not parseArgs text', async () => {
    const unknown = await adwire('keys', 'generate', '--bogus')
    expect(unknown).toMatchObject({ code: 2, stdout: '' })
    expect(unknown.stderr).toBe(
      'adwire: unknown option --bogus\nRun `adwire keys generate --help` for usage.\n',
    )
    const missing = await adwire('webhook', 'sign', '--request')
    expect(missing.stderr).toMatch(/^adwire: --request needs a value\n/)
    const stray = await adwire('registry', 'lookup', '--json=1')
    expect(stray.stderr).toMatch(/^adwire: --json takes no value\n/)
    for (const result of [unknown, missing, stray]) {
      expect(result.stderr).not.toMatch(
        /Unknown option|To specify a positional|argument missing|does not take/,
      )
    }
    expect(parseArgsMessage(new Error('plain'))).toBeUndefined()
  })

  it('names the command as typed in hints: `pnpm adwire …` through the workspace script', async () => {
    process.env.ADWIRE_COMMAND = 'pnpm adwire'
    expect(commandName()).toBe('pnpm adwire')
    const result = await adwire('schemas', 'validate')
    expect(result.stderr).toBe(
      'adwire: SHAPE is required (schemas validate SHAPE [FILE]; see `pnpm adwire schemas list`)\n' +
        'Run `pnpm adwire schemas validate --help` for usage.\n',
    )
    expect((await adwire('nope')).stderr).toContain('Run `pnpm adwire --help` for usage.')
    expect((await adwire('webhook', 'sign', '--help')).stdout).toMatch(/^usage: pnpm adwire webhook sign /)
    delete process.env.ADWIRE_COMMAND
    expect(commandName()).toBe('adwire')
    expect(asTyped('see `adwire keys generate`', 'npx adwire')).toBe('see `npx adwire keys generate`')
  })
})

describe('JSON output', () => {
  it('ends every JSON document with a newline', async () => {
    const webhook = path.join(folder, 'webhook.json')
    writeFileSync(webhook, JSON.stringify({ task_id: 't', status: 'working' }))
    const outputs = [
      await adwire('keys', 'generate', '--alg', 'ed25519', '--kid', 'k1'),
      await adwire('webhook', 'parse', webhook),
      await adwire('schemas', 'validate', 'BrandJson', webhook),
    ]
    for (const { stdout } of outputs) {
      expect(stdout.length).toBeGreaterThan(2)
      expect(stdout.endsWith('\n')).toBe(true)
      for (const line of stdout.trimEnd().split('\n')) expect(() => JSON.parse(line)).not.toThrow()
    }
  })
})
