import {
  dropSchema,
  freshSchemaName,
  queryOnce,
  resolveTestPostgresUrl,
} from '@adwire/vitest-config/postgres'
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresStores, type PostgresStores } from './open.js'
import { SCHEMA_VERSION } from './migrations.js'

const url = await resolveTestPostgresUrl()
const packageDirectory = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** Starts the worker fixture in its own Node process (TypeScript through tsx). */
function startWorker(args: string[]): {
  child: ChildProcessWithoutNullStreams
  lines: AsyncIterator<string>
} {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/claim-worker.fixture.ts', ...args], {
    cwd: packageDirectory,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  child.on('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGKILL') console.error(`worker exited with ${code ?? signal}: ${stderr}`)
  })
  return { child, lines: createInterface({ input: child.stdout })[Symbol.asyncIterator]() }
}

async function nextLine(worker: { lines: AsyncIterator<string> }): Promise<string> {
  const line = await worker.lines.next()
  if (line.done) throw new Error('the worker ended without answering')
  return line.value
}

const exited = (child: ChildProcessWithoutNullStreams) =>
  new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  )

if (!url) {
  describe.skip('PostgreSQL stores across processes (ADWIRE_TEST_POSTGRES_URL unset or unreachable)', () => {
    it('needs a PostgreSQL server', () => {})
  })
} else {
  describe('PostgreSQL stores across processes', () => {
    const schema = freshSchemaName()
    let stores: PostgresStores
    let other: PostgresStores
    beforeAll(async () => {
      stores = await openPostgresStores({ connectionString: url, schema })
      other = await openPostgresStores({ connectionString: url, schema, maxConnections: 2 })
    })
    afterAll(async () => {
      await Promise.all([stores?.close(), other?.close()])
      await dropSchema(url, schema)
    })

    it('gives every key to exactly one of 4 processes claiming the same 50 keys at once (migrating a new schema together)', async () => {
      const shared = freshSchemaName()
      try {
        const workers = Array.from({ length: 4 }, () => startWorker([url, shared, 'claim-many', '50']))
        for (const worker of workers) expect(await nextLine(worker)).toBe('ready')
        for (const worker of workers) worker.child.stdin.end('go\n')
        const results = await Promise.all(
          workers.map(async (worker) => JSON.parse(await nextLine(worker)) as Record<string, string>),
        )
        await Promise.all(workers.map((worker) => exited(worker.child)))
        for (let index = 0; index < 50; index += 1) {
          const kinds = results.map((result) => result[`key-${index}`])
          expect(
            kinds.filter((kind) => kind === 'claimed'),
            `key-${index}`,
          ).toHaveLength(1)
          expect(
            kinds.filter((kind) => kind === 'processing'),
            `key-${index}`,
          ).toHaveLength(3)
        }
        const versions = await queryOnce<{ version: number }>(
          url,
          `SELECT version FROM "${shared}".schema_migrations ORDER BY version`,
        )
        expect(versions).toEqual(
          Array.from({ length: SCHEMA_VERSION }, (_, index) => ({ version: index + 1 })),
        )
      } finally {
        await dropSchema(url, shared)
      }
    }, 60_000)

    it('keeps the claim of a SIGKILLed process processing until its lease ends, then hands it over', async () => {
      const worker = startWorker([url, schema, 'hold', 'held-key'])
      const first = JSON.parse(await nextLine(worker)) as { kind: string; fence: string }
      expect(first).toMatchObject({ kind: 'claimed', takeover: false })
      worker.child.kill('SIGKILL')
      await exited(worker.child)
      const input = {
        namespace: 'webhook',
        scope: 'sender-1',
        key: 'held-key',
        fingerprint: 'f'.repeat(64),
        leaseSeconds: 30,
        retentionSeconds: 86_400,
      } as const
      expect(await stores.claims.claim({ ...input, now: 1_029 })).toEqual({
        kind: 'processing',
        leaseExpiresAt: 1_030,
      })
      const second = await other.claims.claim({ ...input, now: 1_030 })
      expect(second).toMatchObject({ kind: 'claimed', takeover: true })
      if (second.kind !== 'claimed') throw new Error('expected a takeover')
      const ref = { namespace: input.namespace, scope: input.scope, key: input.key }
      expect(await stores.claims.complete({ ...ref, fence: first.fence }, 1_031)).toBe(false)
      expect(await stores.claims.complete({ ...ref, fence: second.fence }, 1_031)).toBe(true)
    }, 60_000)
  })
}
