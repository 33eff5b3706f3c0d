/**
 * Terminal convergence across channels (AdCP 3.2 receiver rules): the same seller task's terminal outcome
 * arriving once as an MCP-shape envelope and once as an A2A Task is one outcome, whatever each envelope adds
 * (the sender echoes `context` inside the A2A DataPart but beside the MCP `result`). The bodies here are
 * built by this package's sender.
 */
import { describe, expect, it } from 'vitest'
import type { Registration } from '../src/index.js'
import { terminalComparison } from '../src/index.js'
import { buildA2ABody, buildMcpBody } from '../src/sender/envelope.js'
import type { ResolvedRegistration } from '../src/sender/registration.js'
import type { A2AVersion, TaskEvent } from '../src/sender/types.js'
import { answer, receiverWith, SELLER, sellerKey, signed } from '../src/testing/receiver.js'

const key = sellerKey()
const TIMESTAMP = '2026-04-18T10:00:00.000Z'
const context = { correlation_id: 'corr-converge' }

const mcpRegistration: ResolvedRegistration = {
  channel: 'adcp',
  destination: 'op_1',
  url: 'https://buyer.example.com/webhooks/mcp',
  operationId: 'op_1',
  context,
}
const a2aRegistration: ResolvedRegistration = {
  channel: 'a2a',
  destination: 'pnc_1',
  url: 'https://buyer.example.com/webhooks/a2a',
  context,
}

/** Built in each test: the key exists only once beforeAll ran. */
const registrations = (): Registration[] => [
  { id: 'mcp', auth: { mode: 'rfc9421', keys: key.jwks }, sender: SELLER, shape: 'mcp' },
  { id: 'a2a', auth: { mode: 'rfc9421', keys: key.jwks }, sender: SELLER, shape: 'a2a' },
]

const completed = (task_id: string, result: Record<string, unknown>): TaskEvent => ({
  task_id,
  task_type: 'create_media_buy',
  status: 'completed',
  result,
})

const mcp = (event: TaskEvent) => JSON.parse(buildMcpBody(mcpRegistration, event, TIMESTAMP).body)
const a2a = (event: TaskEvent, version: A2AVersion = '0.3') =>
  JSON.parse(buildA2ABody(a2aRegistration, event, TIMESTAMP, version).body)

describe('receiver: terminal convergence across MCP and A2A', () => {
  it('answers the same completed result over A2A after MCP as a duplicate, published once', async () => {
    const { receiver, published } = receiverWith(registrations())
    const event = completed(`task_${crypto.randomUUID()}`, { media_buy_id: 'mb_1', packages: [] })
    const overMcp = mcp(event)
    const overA2a = a2a(event)
    // The envelopes really differ: context beside the MCP result, inside the A2A DataPart.
    expect(overMcp.result).toEqual({ media_buy_id: 'mb_1', packages: [] })
    expect(overMcp.context).toEqual(context)
    expect(overA2a.artifacts[0].parts[0].data).toEqual({ media_buy_id: 'mb_1', packages: [], context })
    expect(await answer(await receiver.handle(await signed(key, 'mcp', overMcp)))).toEqual({
      status: 200,
      body: { status: 'accepted' },
    })
    expect(await answer(await receiver.handle(await signed(key, 'a2a', overA2a)))).toEqual({
      status: 200,
      body: { status: 'duplicate' },
    })
    expect(published.map((event) => event.shape)).toEqual(['mcp'])
  })

  it('converges the other way round too, with an A2A 1.0 Task first', async () => {
    const { receiver, published } = receiverWith(registrations())
    const event = completed(`task_${crypto.randomUUID()}`, { media_buy_id: 'mb_2', packages: [] })
    expect((await receiver.handle(await signed(key, 'a2a', a2a(event, '1.0')))).status).toBe(200)
    expect(await answer(await receiver.handle(await signed(key, 'mcp', mcp(event))))).toEqual({
      status: 200,
      body: { status: 'duplicate' },
    })
    expect(published.map((event) => [event.shape, event.status])).toEqual([['a2a', 'completed']])
  })

  it('rejects a different terminal result over the other channel with 409 terminal_conflict', async () => {
    const { receiver, published } = receiverWith(registrations())
    const task_id = `task_${crypto.randomUUID()}`
    await receiver.handle(await signed(key, 'mcp', mcp(completed(task_id, { media_buy_id: 'mb_3' }))))
    const other = a2a(completed(task_id, { media_buy_id: 'mb_other' }))
    expect(await answer(await receiver.handle(await signed(key, 'a2a', other)))).toMatchObject({
      status: 409,
      body: { error: { code: 'terminal_conflict' } },
    })
    const failed = a2a({ task_id, task_type: 'create_media_buy', status: 'failed', result: {} })
    expect((await receiver.handle(await signed(key, 'a2a', failed))).status).toBe(409)
    expect(published).toHaveLength(1)
  })
})

describe('terminalComparison', () => {
  it('drops context and replayed, keeps everything else, and counts an empty result as none', () => {
    expect(terminalComparison('completed', { id: 1, context: { a: 1 }, replayed: true })).toEqual({
      status: 'completed',
      value: { id: 1 },
    })
    expect(terminalComparison('canceled', { context: { a: 1 } })).toEqual({ status: 'canceled', value: null })
    expect(terminalComparison('canceled', undefined)).toEqual({ status: 'canceled', value: null })
    expect(terminalComparison('failed', { errors: [] })).not.toEqual(terminalComparison('failed', {}))
  })
})
