import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { openPostgresStores } from '@adwire/store-postgres'
import { openSqliteStores } from '@adwire/store-sqlite'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { createWebhookReceiver, type ClaimStore, type ConvergenceStore } from '@adwire/webhooks'
import type { ReplayStore } from '@adwire/http-signatures'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { delivery, envelope, sellerKey } from './fixtures.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const tsx = createRequire(import.meta.url).resolve('tsx')
const SENDER = 'https://seller.example.com'
const LEASE = 1
const postgresUrl = await resolveTestPostgresUrl()

type StoreConfig = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string; schema: string }
interface Stores {
  claims: ClaimStore
  convergence: ConvergenceStore
  replay: ReplayStore
  close(): void | Promise<void>
}

function runChild(
  config: unknown,
): Promise<{ signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'adwire-crash-')), 'config.json')
  writeFileSync(file, JSON.stringify(config))
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', tsx, path.join(here, 'crash-child.ts'), file], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('exit', (_code, signal) => resolve({ signal, stdout, stderr }))
  })
}

async function crashThenRetry(store: StoreConfig, open: () => Promise<Stores>): Promise<void> {
  const key = await sellerKey()
  const payload = envelope()
  const first = await delivery(key, payload)
  const child = await runChild({
    store,
    jwks: key.jwks,
    sender: SENDER,
    leaseSeconds: LEASE,
    request: { url: first.url, headers: Object.fromEntries(first.headers), body: await first.text() },
  })
  expect(child.stdout, child.stderr).toBe('publishing\n')
  expect(child.signal).toBe('SIGKILL')

  // A new process (the restarted receiver) on the same store.
  const stores = await open()
  const published: string[] = []
  const receiver = createWebhookReceiver({
    registration: () => ({ id: 'seller', auth: { mode: 'rfc9421', keys: key.jwks }, sender: SENDER }),
    claims: stores.claims,
    convergence: stores.convergence,
    replayStore: stores.replay,
    limits: { leaseSeconds: LEASE },
    publish: async (event) => void published.push(event.idempotencyKey),
  })
  try {
    expect(published).toEqual([])
    // While the dead owner's lease lasts, a retry is told to come back later; nothing is published.
    const early = await receiver.handle(await delivery(key, payload))
    expect([503, 200]).toContain(early.status)
    if (early.status === 503) {
      expect(published).toEqual([])
      await new Promise((resolve) => setTimeout(resolve, (LEASE + 0.3) * 1000))
      expect((await receiver.handle(await delivery(key, payload))).status).toBe(200)
    }
    expect(published).toEqual([payload.idempotency_key])
    expect((await receiver.handle(await delivery(key, payload))).status).toBe(200)
    expect(published).toEqual([payload.idempotency_key])
  } finally {
    await stores.close()
  }
}

describe('a receiver killed inside the publish callback', () => {
  it('SQLite: publishes nothing, then exactly once after a restart and the lease', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'adwire-crash-')), 'receiver.sqlite')
    await crashThenRetry({ kind: 'sqlite', path: file }, async () => openSqliteStores({ path: file }))
  })

  it.skipIf(!postgresUrl)('PostgreSQL: publishes nothing, then exactly once after the lease', async () => {
    const schema = `adwire_crash_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
    try {
      await crashThenRetry({ kind: 'postgres', url: postgresUrl!, schema }, () =>
        openPostgresStores({ connectionString: postgresUrl!, schema }),
      )
    } finally {
      const client = new pg.Client({ connectionString: postgresUrl! })
      await client.connect()
      await client.query(`drop schema if exists ${schema} cascade`)
      await client.end()
    }
  })
})
