import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { commandList, mainHelp } from './cli.js'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')

/** The commands the README's table lists: `adwire <command> [<sub>]` at the start of each row's first cell. */
const readmeCommands = (): string[] =>
  [...readme.matchAll(/^\| `adwire ([a-z-]+)(?: ([a-z-]+))?/gm)].map(([, command, sub]) =>
    `${command} ${sub ?? ''}`.trim(),
  )

describe('packages/cli/README.md', () => {
  it('lists every command the CLI runs, once, and no other', () => {
    const listed = readmeCommands()
    expect(new Set(listed).size).toBe(listed.length)
    expect([...listed].sort()).toEqual([...commandList()].sort())
  })

  it('agrees with the main help, which names every command group and subcommand', () => {
    for (const command of commandList()) {
      const [group, sub] = command.split(' ')
      const line = mainHelp
        .split('\n')
        .find(
          (text) =>
            text.startsWith(`  ${group} `) && (sub === undefined || new RegExp(`[ |]${sub}\\b`).test(text)),
        )
      expect(line, `adwire --help names ${command}`).toBeDefined()
    }
  })
})
