/**
 * `pnpm soak` (soak/soak.ts) at a tiny N, so that CI proves it works: 2,000 deliveries to two receiver
 * processes on one PostgreSQL schema, two random SIGKILLs with restarts, a fifth of the deliveries sent to both
 * processes at once. It must read the receiver's store and report 0 lost, 0 doubled and every delivery
 * accepted, print progress lines while it runs, and exit 0. `--help` and a bad option are checked too.
 */
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { describe, expect, it } from 'vitest'

const SOAK = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'soak', 'soak.ts')
const TSX = createRequire(import.meta.url).resolve('tsx')
const postgresUrl = await resolveTestPostgresUrl()

function run(args: readonly string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX, SOAK, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.once('error', reject)
    child.once('exit', (code) => resolve({ code, output }))
  })
}

describe('pnpm soak', () => {
  it('prints its usage with --help and refuses a bad option', async () => {
    const help = await run(['--help'])
    expect(help.code).toBe(0)
    expect(help.output).toContain('--deliveries N')
    expect(help.output).toContain('lost / doubled / accepted')
    const bad = await run(['--deliveries', 'many'])
    expect(bad.code).toBe(2)
    expect(bad.output).toContain('--deliveries must be an integer')
  })

  it.skipIf(!postgresUrl)(
    'reports 0 lost, 0 doubled, all accepted for 2,000 deliveries with 2 SIGKILLs and duplicates',
    async () => {
      const { code, output } = await run(
        // Three sellers: groups of both processes lock several sellers' counter rows (no deadlock, no 503).
        [
          '--deliveries',
          '2000',
          '--kills',
          '2',
          '--duplicates',
          '0.2',
          '--senders',
          '3',
          '--progress-seconds',
          '1',
        ],
        { ADWIRE_TEST_POSTGRES_URL: postgresUrl! },
      )
      expect(output).toContain('lost 0 / doubled 0 / accepted 2000 of 2000')
      expect(output).toMatch(/ 2 SIGKILLs /)
      // Some deliveries went to both processes, and the second answer was `duplicate`.
      const both = Number(/(\d+) deliveries sent to both processes at once/.exec(output)?.[1])
      expect(both).toBeGreaterThan(100)
      expect(Number(/answers: \d+ accepted, (\d+) duplicate/.exec(output)?.[1])).toBeGreaterThanOrEqual(both)
      expect(output).toMatch(/store: 2000 event rows/)
      expect(output).toMatch(/\[soak \d\d:\d\d\] \d+\/2000 delivered/)
      expect(output).toContain('soak: PASS')
      expect(output).toMatch(/ 0 other 503,/)
      expect(code, output).toBe(0)
    },
    300_000,
  )
})
