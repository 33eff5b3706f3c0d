/* eslint-disable @typescript-eslint/no-explicit-any -- loose JSON access in assertions */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { openSqliteStores, type SqliteStores } from '@adwire/store-sqlite'
import { MemoryClaimStore, type ClaimStore } from '@adwire/webhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AgentError } from './errors.js'
import { requestFingerprint, runIdempotent } from './idempotency.js'
import { createAgentServer } from './server.js'
import {
  BUYER_TOKEN,
  demoTasks,
  executions,
  startAgent,
  tokens,
  type RunningAgent,
} from './testing/support.js'

type ToolResult = { structuredContent?: Record<string, any>; isError?: boolean }
const format = { agent_url: 'https://agent.example', id: 'display_300x250' }

describe('requestFingerprint', () => {
  it('ignores idempotency_key, context and push credentials, and key order', () => {
    const base = {
      b: 1,
      a: { y: 2, x: 1 },
      push_notification_config: {
        url: 'https://b.example/h',
        authentication: { schemes: ['Bearer'], credentials: 'one' },
      },
    }
    const other = {
      a: { x: 1, y: 2 },
      b: 1,
      idempotency_key: 'k',
      context: { c: 1 },
      push_notification_config: {
        url: 'https://b.example/h',
        authentication: { schemes: ['Bearer'], credentials: 'two' },
      },
    }
    expect(requestFingerprint('t', base)).toBe(requestFingerprint('t', other))
    expect(requestFingerprint('t', base)).not.toBe(requestFingerprint('t', { ...base, b: 2 }))
    expect(requestFingerprint('t', base)).not.toBe(requestFingerprint('u', base))
  })
})

const stores: [string, () => { store: ClaimStore; close(): void }][] = [
  ['memory', () => ({ store: new MemoryClaimStore(), close: () => undefined })],
  [
    'SQLite',
    () => {
      const directory = mkdtempSync(join(tmpdir(), 'agent-server-'))
      const sqlite: SqliteStores = openSqliteStores({ path: join(directory, 'stores.sqlite') })
      return {
        store: sqlite.claims,
        close: () => (sqlite.close(), rmSync(directory, { recursive: true, force: true })),
      }
    },
  ],
]

describe.each(stores)('request idempotency on the %s ClaimStore', (_name, open) => {
  let agent: RunningAgent
  let opened: { store: ClaimStore; close(): void }

  beforeAll(async () => {
    opened = open()
    agent = await startAgent({
      auth: { tokens },
      idempotency: { store: opened.store, replayTtlSeconds: 3600 },
    })
  })
  afterAll(async () => {
    await agent.close()
    opened.close()
  })

  async function call(args: Record<string, unknown>): Promise<ToolResult> {
    const client = new Client({ name: 'buyer', version: '1' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${agent.origin}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${BUYER_TOKEN}` } },
      }),
    )
    try {
      return (await client.callTool({ name: 'build_creative', arguments: args })) as ToolResult
    } finally {
      await client.close()
    }
  }

  it('replays the same response with replayed: true and the new context, without running again', async () => {
    const message = `replay-${crypto.randomUUID()}`
    const args = { idempotency_key: `key_${crypto.randomUUID()}`, target_format_id: format, message }
    const first = await call({ ...args, context: { attempt: 1 } })
    const second = await call({ ...args, context: { attempt: 2 } })
    expect(first.structuredContent).not.toHaveProperty('replayed')
    const { context: _a, ...firstBody } = first.structuredContent!
    expect(second.structuredContent).toEqual({ ...firstBody, context: { attempt: 2 }, replayed: true })
    expect(executions.get(message)).toBe(1)
  })

  it('answers IDEMPOTENCY_CONFLICT for a changed request under the same key, leaking nothing', async () => {
    const idempotency_key = `key_${crypto.randomUUID()}`
    await call({ idempotency_key, target_format_id: format, message: 'original secret' })
    const conflict = await call({ idempotency_key, target_format_id: format, message: 'changed' })
    expect(conflict.isError).toBe(true)
    expect(conflict.structuredContent!.adcp_error).toMatchObject({
      code: 'IDEMPOTENCY_CONFLICT',
      recovery: 'correctable',
    })
    expect(conflict.structuredContent!.adcp_error).not.toHaveProperty('field')
    expect(JSON.stringify(conflict)).not.toContain('original secret')
  })

  it('runs concurrent duplicates once: the others get IDEMPOTENCY_IN_FLIGHT', async () => {
    const message = `concurrent-${crypto.randomUUID()}`
    const args = {
      idempotency_key: `key_${crypto.randomUUID()}`,
      target_format_id: format,
      message,
      delay_ms: 300,
    }
    const results = await Promise.all([call(args), call(args), call(args)])
    expect(executions.get(message)).toBe(1)
    expect(results.filter((result) => !result.isError)).toHaveLength(1)
    for (const result of results.filter((result) => result.isError))
      expect(result.structuredContent!.adcp_error).toMatchObject({
        code: 'IDEMPOTENCY_IN_FLIGHT',
        recovery: 'transient',
      })
    const after = await call(args)
    expect(after.structuredContent).toMatchObject({ replayed: true })
  })

  it('caches only successes: a failed key can be retried and runs again', async () => {
    const args = {
      idempotency_key: `key_${crypto.randomUUID()}`,
      target_format_id: { ...format, id: 'unknown' },
      message: `fail-${crypto.randomUUID()}`,
    }
    const first = await call(args)
    const second = await call(args)
    expect(first.structuredContent!.adcp_error.code).toBe('FORMAT_NOT_SUPPORTED')
    expect(second.structuredContent!.adcp_error.code).toBe('FORMAT_NOT_SUPPORTED')
    expect(executions.get(args.message)).toBe(2)
  })
})

describe('idempotency options', () => {
  const store = new MemoryClaimStore()
  const start = (idempotency: Record<string, unknown>) => () =>
    createAgentServer({
      tasks: demoTasks,
      name: 'demo',
      version: '1',
      url: 'http://127.0.0.1:1',
      idempotency: { store, ...idempotency },
    })

  it.each([
    ['below one hour', { replayTtlSeconds: 3599 }, /replayTtlSeconds .*3600.*604800.*3599/],
    ['above seven days', { replayTtlSeconds: 604_801 }, /replayTtlSeconds/],
    ['fractional', { replayTtlSeconds: 3600.5 }, /replayTtlSeconds/],
    ['a lease longer than the window', { replayTtlSeconds: 3600, leaseSeconds: 3601 }, /leaseSeconds/],
    ['a negative expiry marker', { expiryMarkerSeconds: -1 }, /expiryMarkerSeconds/],
    ['zero keys per principal', { maxKeysPerPrincipal: 0 }, /maxKeysPerPrincipal/],
  ])('refuses %s at construction with a RangeError', (_name, options, message) => {
    expect(start(options)).toThrow(RangeError)
    expect(start(options)).toThrow(message)
  })

  it('accepts the bounds and the default', () => {
    expect(start({ replayTtlSeconds: 3600 })).not.toThrow()
    expect(start({ replayTtlSeconds: 604_800 })).not.toThrow()
    expect(start({})).not.toThrow()
  })
})

describe('request idempotency past the replay window (SQLite file)', () => {
  const TTL = 3600
  const MARKER = 86_400
  const T0 = 1_800_000_000
  let clock = T0
  let directory: string
  let sqlite: SqliteStores
  let agent: RunningAgent

  const open = async () => {
    sqlite = openSqliteStores({ path: join(directory, 'window.sqlite') })
    agent = await startAgent({
      auth: { tokens },
      idempotency: { store: sqlite.claims, replayTtlSeconds: TTL, expiryMarkerSeconds: MARKER },
      now: () => clock,
    })
  }
  const close = async () => {
    await agent.close()
    sqlite.close()
  }
  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'agent-server-window-'))
    await open()
  })
  afterAll(async () => {
    await close()
    rmSync(directory, { recursive: true, force: true })
  })

  async function call(args: Record<string, unknown>): Promise<ToolResult> {
    const client = new Client({ name: 'buyer', version: '1' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${agent.origin}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${BUYER_TOKEN}` } },
      }),
    )
    try {
      return (await client.callTool({ name: 'build_creative', arguments: args })) as ToolResult
    } finally {
      await client.close()
    }
  }

  it('replays inside the window, answers IDEMPOTENCY_EXPIRED after it (also after a restart), then forgets the key', async () => {
    const message = `window-${crypto.randomUUID()}`
    const args = { idempotency_key: `key_${crypto.randomUUID()}`, target_format_id: format, message }
    clock = T0
    expect((await call(args)).structuredContent).toHaveProperty('creative_manifest')
    clock = T0 + TTL - 1
    expect((await call(args)).structuredContent).toMatchObject({ replayed: true })

    clock = T0 + TTL
    const late = await call(args)
    expect(late.isError).toBe(true)
    expect(late.structuredContent!.adcp_error).toMatchObject({
      code: 'IDEMPOTENCY_EXPIRED',
      recovery: 'correctable',
      suggestion: expect.stringContaining('fresh idempotency_key'),
    })
    // A changed request under the expired key is refused the same way (not run, not a conflict).
    const changed = await call({ ...args, message: `${message}-changed` })
    expect(changed.structuredContent!.adcp_error.code).toBe('IDEMPOTENCY_EXPIRED')
    expect(executions.get(message)).toBe(1)
    expect(executions.get(`${message}-changed`)).toBeUndefined()

    // The marker is durable: a new process on the same file still knows the key.
    await close()
    await open()
    clock = T0 + TTL + 100
    expect((await call(args)).structuredContent!.adcp_error.code).toBe('IDEMPOTENCY_EXPIRED')
    expect(executions.get(message)).toBe(1)

    // Once the marker is gone too, the key is simply new.
    clock = T0 + TTL + MARKER
    expect((await call(args)).structuredContent).not.toHaveProperty('replayed')
    expect(executions.get(message)).toBe(2)
  })

  it('counts the window from the first acceptance even when the first attempt failed', async () => {
    const claim = { scope: 'buyer-1', key: `key_${crypto.randomUUID()}`, fingerprint: 'f1' }
    const options = { store: sqlite.claims, replayTtlSeconds: TTL, expiryMarkerSeconds: MARKER }
    const base = T0 + 10 * MARKER
    let runs = 0
    const succeed = async () => ((runs += 1), { ok: runs })
    const fail = async () => {
      runs += 1
      throw new AgentError('SERVICE_UNAVAILABLE', 'try again')
    }
    await expect(runIdempotent(options, { ...claim, now: base }, fail)).rejects.toThrow('try again')
    // The retry takes the released key over; the response record still dates from the first attempt.
    expect(await runIdempotent(options, { ...claim, now: base + 60 }, succeed)).toEqual({
      response: { ok: 2 },
      replayed: false,
    })
    expect(await runIdempotent(options, { ...claim, now: base + TTL - 1 }, succeed)).toEqual({
      response: { ok: 2 },
      replayed: true,
    })
    for (const at of [base + TTL, base + TTL + 30, base + TTL + 61])
      await expect(runIdempotent(options, { ...claim, now: at }, succeed)).rejects.toMatchObject({
        code: 'IDEMPOTENCY_EXPIRED',
      })
    expect(runs).toBe(2)
  })
})
