/** `admin grant-moderator` / `revoke-moderator`: the only way to make moderators outside code. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openRepository } from '../db/repository.js'
import { runAdmin } from './admin-cli.js'

const dir = mkdtempSync(join(tmpdir(), 'registry-admin-moderator-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function capture() {
  const out: string[] = []
  const err: string[] = []
  return { out, err, io: { out: (line: string) => out.push(line), err: (line: string) => err.push(line) } }
}

describe('registry admin grant-moderator / revoke-moderator', () => {
  it('grants and revokes moderation of community mirrors to an existing organization', async () => {
    const env = { DATABASE_URL: `sqlite:${join(dir, 'registry.sqlite')}` }
    const created = capture()
    expect(await runAdmin(['create-org', '--name', 'Mirror Moderators', '--json'], env, created.io)).toBe(0)
    const { id } = JSON.parse(created.out[0]!) as { id: string }
    const isModerator = async () => {
      const { repository } = await openRepository({ kind: 'sqlite', path: join(dir, 'registry.sqlite') })
      try {
        return await repository.mirrors.isModerator(id)
      } finally {
        await repository.close()
      }
    }
    expect(await isModerator()).toBe(false)
    const granted = capture()
    expect(await runAdmin(['grant-moderator', '--org', id], env, granted.io)).toBe(0)
    expect(granted.out.join('\n')).toContain(`${id} is a moderator`)
    expect(await isModerator()).toBe(true)
    const revoked = capture()
    expect(await runAdmin(['revoke-moderator', `--org=${id}`], env, revoked.io)).toBe(0)
    expect(await isModerator()).toBe(false)
  })

  it('refuses an unknown organization (1) and a missing --org (2)', async () => {
    const env = { DATABASE_URL: `sqlite:${join(dir, 'other.sqlite')}` }
    const unknown = capture()
    expect(await runAdmin(['grant-moderator', '--org', 'org_nobody'], env, unknown.io)).toBe(1)
    expect(unknown.err.join('\n')).toMatch(/no organization org_nobody/)
    const missing = capture()
    expect(await runAdmin(['grant-moderator'], env, missing.io)).toBe(2)
    expect(missing.err.join('\n')).toMatch(/--org ORG_ID is required/)
  })
})
