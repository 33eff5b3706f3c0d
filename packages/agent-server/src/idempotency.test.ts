/* eslint-disable @typescript-eslint/no-explicit-any -- loose JSON access in assertions */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { openSqliteStores, type SqliteStores } from '@adwire/store-sqlite'
import { MemoryClaimStore, type ClaimStore } from '@adwire/webhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requestFingerprint } from './idempotency.js'
import { BUYER_TOKEN, executions, startAgent, tokens, type RunningAgent } from './test-support.js'

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
