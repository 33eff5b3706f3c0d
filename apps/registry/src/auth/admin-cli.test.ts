import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { resolveTestPostgresUrl } from '@adwire/vitest-config'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { adminDatabase, runAdmin } from './admin-cli.js'
import { createAuth } from './index.js'

const dir = mkdtempSync(join(tmpdir(), 'registry-admin-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function capture(): { out: string[]; err: string[]; io: { out(l: string): void; err(l: string): void } } {
  const out: string[] = []
  const err: string[] = []
  return { out, err, io: { out: (line) => out.push(line), err: (line) => err.push(line) } }
}

const bearer = (key: string) => new Request('http://x/api', { headers: { authorization: `Bearer ${key}` } })

describe('registry admin create-org', () => {
  it('writes the organization into the SQLite database and prints the key once', async () => {
    const path = join(dir, 'nested', 'registry.sqlite')
    const { out, io } = capture()
    const code = await runAdmin(
      ['create-org', '--name', 'Acme Media', '--json'],
      { DATABASE_URL: `sqlite:${path}` },
      io,
    )
    expect(code).toBe(0)
    const printed = JSON.parse(out[0]!) as { id: string; name: string; apiKey: string }
    expect(printed).toMatchObject({ name: 'Acme Media', apiKey: expect.stringMatching(/^sk_/) })
    const db = new Database(path)
    try {
      const auth = createAuth({ kind: 'sqlite', db }, { issuer: 'http://127.0.0.1:4100' })
      expect(await auth.authenticate(bearer(printed.apiKey))).toEqual({
        kind: 'org',
        id: printed.id,
        orgId: printed.id,
        orgName: 'Acme Media',
      })
    } finally {
      db.close()
    }
  })

  it('reports usage errors with exit code 2', async () => {
    const missing = capture()
    expect(await runAdmin(['create-org'], {}, missing.io)).toBe(2)
    expect(missing.err.join('\n')).toMatch(/--name NAME is required/)
    const unknown = capture()
    expect(await runAdmin(['drop-everything'], {}, unknown.io)).toBe(2)
    expect(unknown.err.join('\n')).toMatch(/unknown admin command/)
    const badUrl = capture()
    expect(await runAdmin(['create-org', '--name', 'X'], { DATABASE_URL: 'mysql://x' }, badUrl.io)).toBe(2)
    expect(badUrl.err.join('\n')).toMatch(/DATABASE_URL must be/)
    expect(() => adminDatabase({ DATABASE_URL: 'postgres://h/db', DATABASE_SCHEMA: 'Bad-Name' })).toThrow(
      /DATABASE_SCHEMA/,
    )
  })

  it('runs as a script and prints the key in text form', async () => {
    const path = join(dir, 'script.sqlite')
    const script = fileURLToPath(new URL('./admin-cli.ts', import.meta.url))
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', script, 'create-org', '--name', 'Beta'],
      {
        env: { ...process.env, DATABASE_URL: `sqlite:${path}` },
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
      },
    )
    expect(stdout).toMatch(
      /^Created organization org_\S+ \(Beta\) in SQLite \S+script\.sqlite\nAPI key \(shown once.*\): sk_\S+\n$/,
    )
  })

  it("is the app's own `admin` entry (pnpm --filter @adwire/app-registry admin …), built to dist", async () => {
    const appDir = fileURLToPath(new URL('../..', import.meta.url))
    const manifest = JSON.parse(readFileSync(join(appDir, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>
    }
    // The script builds the app first, then runs the built entry with the arguments pnpm appends.
    expect(manifest.scripts.admin).toMatch(/&& node dist\/auth\/admin-cli\.js$/)
    const path = join(dir, 'built.sqlite')
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['dist/auth/admin-cli.js', 'create-org', '--name', 'Gamma', '--json'],
      { env: { ...process.env, DATABASE_URL: `sqlite:${path}` }, cwd: appDir },
    )
    expect(JSON.parse(stdout)).toMatchObject({ name: 'Gamma', apiKey: expect.stringMatching(/^sk_/) })
  })
})

const url = await resolveTestPostgresUrl()

describe.skipIf(!url)('registry admin create-org on PostgreSQL', () => {
  it('writes into DATABASE_SCHEMA', async () => {
    const schema = `registry_admin_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
    const pool = new pg.Pool({ connectionString: url })
    try {
      const { out, io } = capture()
      expect(
        await runAdmin(
          ['create-org', '--name=Gamma', '--json'],
          { DATABASE_URL: url, DATABASE_SCHEMA: schema },
          io,
        ),
      ).toBe(0)
      const printed = JSON.parse(out[0]!) as { id: string; apiKey: string }
      const auth = createAuth({ kind: 'postgres', pool, schema }, { issuer: 'http://127.0.0.1:4100' })
      expect(await auth.authenticate(bearer(printed.apiKey))).toMatchObject({ kind: 'org', id: printed.id })
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await pool.end()
    }
  })
})
