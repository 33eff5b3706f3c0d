/**
 * The sales agent (its own process, SQLite) and the reference receiver (apps/receiver, SQLite) registered as
 * the buyer, over HTTP on 127.0.0.1: every kind of webhook the agent emits — task status on both channels
 * (push_notification_config envelopes and A2A taskPushNotificationConfig events), scheduled and final delivery
 * reports (legacy HMAC, as the reporting_webhook asks), an impairment, a creative status change and
 * capabilities.changed — is verified (RFC 9421 keys from the agent's JWKS) and published exactly once, also
 * across a SIGKILL of the agent while a report is on the wire: the restarted agent retries it under the same
 * idempotency_key and the receiver answers it as a duplicate. get_media_buys then lists the buy's fires in
 * webhook_activity.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- tests read JSON payloads freely */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { a2aResponseData, a2aSendRequest } from '@adwire/agent-client'
import { parseEnv, startReceiver, type NewEvent, type RunningReceiver } from '@adwire/app-receiver'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_TOKEN, api, events } from './receiver-support.js'
import {
  freePort,
  spawnSalesAgent,
  startHoldingProxy,
  type AgentProcess,
  type HoldingProxy,
} from './sales-agent-support.js'

const TOKEN = 'e2e-buyer-token-0123456789abcdef'
const HMAC_SECRET = 'e2e-reporting-hmac-secret-0123456789abcdef'
const ACCOUNT = { brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle.example', sandbox: true }
const directory = mkdtempSync(path.join(tmpdir(), 'adwire-e2e-sales-'))

let receiver: RunningReceiver
let proxy: HoldingProxy
let agent: AgentProcess
let agentPort: number
/** What the receiver stored, in order (payload included). */
const recorded: NewEvent[] = []
/** The receiver's log lines (printed when a wait times out). */
const receiverLog: string[] = []
const hooks: Record<string, { id: string; url: string }> = {}

const agentEnv = (extra: Record<string, string> = {}) => ({
  PORT: String(agentPort),
  DATABASE_URL: `sqlite:${path.join(directory, 'sales-agent.sqlite')}`,
  TOKENS: `buyer-e2e:${TOKEN}:read+write+delete+approve`,
  ALLOW_INSECURE_WEBHOOK_URLS: '1',
  BUY_REVIEW: 'always',
  REVIEW_SECONDS: '1',
  // The run drives comply_test_controller (off unless turned on).
  COMPLY_TEST_CONTROLLER: '1',
  REPORT_PERIOD_SECONDS: '2',
  REPORT_TICK_MS: '250',
  SENDER_LEASE_SECONDS: '8',
  // Generous for a loaded CI machine (every suite runs at once): a slow answer must not push the retries
  // (2 s, doubling) past the waits below. The lease outlives an attempt's timeout.
  SENDER_TIMEOUT_MS: '6000',
  ...extra,
})

async function mcp(name: string, args: Record<string, unknown>): Promise<any> {
  const client = new Client({ name: 'e2e-buyer', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    }),
  )
  try {
    const result = (await client.callTool({ name, arguments: args })) as any
    if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.structuredContent)}`)
    return result.structuredContent
  } finally {
    await client.close()
  }
}

const key = () => `e2e_${crypto.randomUUID()}`
const of = (name: string) => recorded.filter((event) => event.registrationId === hooks[name]!.id)
const payloads = (name: string) => of(name).map((event) => JSON.parse(event.payload))

async function until(what: string, condition: () => boolean, ms = 90_000): Promise<void> {
  const end = Date.now() + ms
  while (!condition()) {
    if (Date.now() > end) {
      const agentLog = (agent?.output() ?? '')
        .split('\n')
        .filter((line) => !line.includes('legacy_auth'))
        .join('\n')
        .slice(-4000)
      throw new Error(
        `timed out waiting for ${what}\nagent:\n${agentLog}\nreceiver:\n${receiverLog.slice(-40).join('\n')}`,
      )
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

beforeAll(async () => {
  agentPort = await freePort()
  proxy = await startHoldingProxy(() => new URL(receiver.url))
  receiver = await startReceiver(
    parseEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${path.join(directory, 'receiver.sqlite')}`,
      ADMIN_TOKEN,
      PUBLIC_URL: proxy.url,
      ALLOW_INSECURE_KEY_URLS: '1',
    }),
    {
      log: (entry) => receiverLog.push(JSON.stringify(entry)),
      database: (db) => ({
        ...db,
        async recordEvent(event, transaction) {
          const stored = await db.recordEvent(event, transaction)
          recorded.push(event)
          return stored
        },
        async recordEvents(events, transaction) {
          const stored = await db.recordEvents(events, transaction)
          recorded.push(...events)
          return stored
        },
      }),
    },
  )
  agent = await spawnSalesAgent(agentEnv())
  // The agent's keys go into the registrations inline, so a slow first key fetch on a loaded machine cannot
  // stall the deliveries (discovery through jwks_uri is covered by the receiver's own tests).
  const jwks = await (await fetch(`${agent.url}/.well-known/jwks.json`)).json()
  const register = async (name: string, body: Record<string, unknown>) => {
    const created = await api(receiver.url, '/api/registrations', { label: name, ...body })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    hooks[name] = { id: created.body.id, url: created.body.url }
  }
  await register('task', { auth: 'rfc9421', jwks, shape: 'mcp' })
  await register('a2a', { auth: 'rfc9421', jwks, shape: 'a2a' })
  await register('reports', { auth: 'hmac', secret: HMAC_SECRET, shape: 'mcp' })
  await register('creative', { auth: 'rfc9421', jwks, shape: 'creative-status-changed' })
  await register('caps', { auth: 'rfc9421', jwks, shape: 'capabilities-changed' })
})

afterAll(async () => {
  await agent?.stop()
  await receiver?.close()
  await proxy?.close()
})

describe('sales agent → reference receiver', () => {
  it('delivers every kind exactly once, across a SIGKILL mid-delivery; webhook_activity matches', async () => {
    await mcp('sync_accounts', {
      idempotency_key: key(),
      accounts: [
        {
          ...ACCOUNT,
          billing: 'operator',
          notification_configs: [
            {
              subscriber_id: 'e2e-creatives',
              url: hooks.creative!.url,
              event_types: ['creative.status_changed'],
            },
          ],
        },
      ],
    })
    await mcp('sync_agent_notification_configs', {
      notification_configs: [
        { subscriber_id: 'e2e-caps', url: hooks.caps!.url, event_types: ['capabilities.changed'] },
      ],
    })
    const creative = {
      creative_id: 'e2e_creative',
      name: 'E2E creative',
      format_id: { agent_url: 'http://127.0.0.1:4200', id: 'display_300x250_image' },
      assets: { image: { asset_type: 'image', url: 'https://cdn.example/a.png', width: 300, height: 250 } },
    }
    await mcp('sync_creatives', { idempotency_key: key(), account: ACCOUNT, creatives: [creative] })
    const buyRequest = (extra: Record<string, unknown>) => ({
      idempotency_key: key(),
      account: ACCOUNT,
      brand: { domain: 'acmeoutdoor.example' },
      start_time: 'asap',
      end_time: '2099-06-30T23:59:59Z',
      packages: [
        {
          product_id: 'trailhead_lifestyle_display',
          pricing_option_id: 'cpm_standard',
          budget: 5000,
          bid_price: 7,
          creative_assignments: [{ creative_id: 'e2e_creative' }],
        },
      ],
      ...extra,
    })

    // Task status over MCP: submitted, then working and completed to push_notification_config.
    const submitted = await mcp(
      'create_media_buy',
      buyRequest({
        context: { correlation_id: 'e2e-mcp' },
        push_notification_config: { url: hooks.task!.url, operation_id: 'op-e2e-mcp' },
        reporting_webhook: {
          url: hooks.reports!.url,
          reporting_frequency: 'hourly',
          authentication: { schemes: ['HMAC-SHA256'], credentials: HMAC_SECRET },
        },
      }),
    )
    expect(submitted).toMatchObject({ status: 'submitted', task_id: expect.any(String) })
    await until(
      'the MCP task pushes',
      () => of('task').filter((e) => e.taskId === submitted.task_id).length === 2,
    )
    const taskEvents = payloads('task').filter((payload) => payload.task_id === submitted.task_id)
    expect(taskEvents.map((payload) => payload.status)).toEqual(['working', 'completed'])
    for (const payload of taskEvents) {
      expect(payload.operation_id).toBe('op-e2e-mcp')
      expect(payload.context).toEqual({ correlation_id: 'e2e-mcp' })
    }
    const mediaBuyId = taskEvents[1].result.media_buy_id as string

    // Task status over A2A: A2A-native events to the taskPushNotificationConfig, MCP envelopes to the
    // push_notification_config of the same call.
    const { headers, body } = a2aSendRequest({
      skill: 'create_media_buy',
      // Both channels: the AdCP push_notification_config in the input and the A2A registration.
      input: buyRequest({
        context: { correlation_id: 'e2e-a2a' },
        push_notification_config: { url: hooks.task!.url, operation_id: 'op-e2e-a2a' },
      }),
      version: '1.0',
      configuration: { taskPushNotificationConfig: { url: hooks.a2a!.url, id: 'e2e-a2a' } },
    })
    const sent = (await (
      await fetch(`${agent.url}/a2a`, {
        method: 'POST',
        headers: { ...headers, authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify(body),
      })
    ).json()) as any
    const answer = a2aResponseData(sent) as any
    expect(answer, JSON.stringify(answer)).toMatchObject({ status: 'submitted' })
    // The A2A events name the A2A Task the call created, the envelopes the AdCP task.
    await until(
      'the A2A task pushes',
      () => of('a2a').filter((e) => e.taskId === sent.result.task.id).length === 2,
    )
    await until(
      'the envelopes of the A2A call',
      () => of('task').filter((e) => e.taskId === answer.task_id).length === 2,
    )
    expect(
      payloads('task')
        .filter((payload) => payload.task_id === answer.task_id)
        .map((payload) => [payload.operation_id, payload.status]),
    ).toEqual([
      ['op-e2e-a2a', 'working'],
      ['op-e2e-a2a', 'completed'],
    ])
    // A2A-native, in the version of the message that registered it (1.0): a StreamResponse wrapping the
    // TaskStatusUpdateEvent while working, the Task when completed.
    expect(
      of('a2a').map((event) => [Object.keys(JSON.parse(event.payload) as object), event.status]),
    ).toEqual([
      [['statusUpdate'], 'working'],
      [['task'], 'completed'],
    ])

    // Scheduled reports on the cadence; then the agent is killed while one is on the wire.
    await until('a scheduled report', () => of('reports').length >= 1)
    const held = await proxy.holdNext(new URL(hooks.reports!.url).pathname)
    const heldKey = JSON.parse(held.body).idempotency_key as string
    await agent.kill()
    expect(await held.release()).toBe(200)
    await until('the held report published', () => of('reports').some((e) => e.idempotencyKey === heldKey))
    // Restarted on the same database with a new capability snapshot (another replay window).
    agent = await spawnSalesAgent(agentEnv({ IDEMPOTENCY_TTL_SECONDS: '7200' }))
    await until('capabilities.changed', () => of('caps').length === 1)
    expect(payloads('caps')[0]).toMatchObject({
      capabilities_version: expect.any(String),
      subscriber_id: 'e2e-caps',
    })
    // The restarted sender retries the interrupted attempt (same key) once the lease ends: the receiver
    // answers it as a duplicate, so it is still published once (webhook_activity below shows the attempt).
    await until(
      'the retry of the held report answered',
      () => proxy.answered.filter((body) => body.includes(heldKey)).length >= 2,
    )
    expect(of('reports').filter((event) => event.idempotencyKey === heldKey)).toHaveLength(1)

    // A seller-side creative rejection: creative.status_changed to the account, an impairment to the buy.
    await mcp('comply_test_controller', {
      scenario: 'force_creative_status',
      params: { creative_id: 'e2e_creative', status: 'rejected', rejection_reason: 'brand safety' },
      account: ACCOUNT,
    })
    await until('creative.status_changed', () => of('creative').length === 1)
    expect(payloads('creative')[0]).toMatchObject({
      notification_type: 'creative.status_changed',
      creative_id: 'e2e_creative',
      transition: { from: 'approved', to: 'rejected' },
      subscriber_id: 'e2e-creatives',
    })

    // Cancel: the queued impairment (push URL) and the final report (reporting URL) both arrive, then nothing on
    // the reporting URL. Order is kept per receiver URL, not across URLs: one failing URL never holds back another.
    await mcp('update_media_buy', {
      idempotency_key: key(),
      account: ACCOUNT,
      media_buy_id: mediaBuyId,
      canceled: true,
    })
    await until('the final report', () =>
      payloads('reports').some((payload) => payload.result.notification_type === 'final'),
    )
    await until('the impairment', () =>
      payloads('task').some((payload) => payload.result?.notification_type === 'impairment'),
    )
    const impairment = of('task').find(
      (event) => JSON.parse(event.payload).result?.notification_type === 'impairment',
    )!
    const final = of('reports').find(
      (event) => JSON.parse(event.payload).result.notification_type === 'final',
    )!
    expect(JSON.parse(impairment.payload).result.notification_type).toBe('impairment')
    await new Promise((resolve) => setTimeout(resolve, 3000))
    expect(of('reports').at(-1)).toBe(final)
    const reports = payloads('reports').map((payload) => payload.result)
    expect(reports.slice(0, -1).every((result) => result.notification_type === 'scheduled')).toBe(true)
    const sequences = reports.map((result) => result.sequence_number)
    expect([...sequences].sort((a, b) => a - b)).toEqual(sequences)
    expect(new Set(sequences).size).toBe(sequences.length)

    // Exactly once: every event the receiver holds was published once, under a distinct key.
    for (const name of Object.keys(hooks)) {
      const listed = await events(receiver.url, hooks[name]!.id)
      expect(listed.length, name).toBe(of(name).length)
      expect(
        listed.every((event) => event.publications === 1),
        name,
      ).toBe(true)
      expect(new Set(listed.map((event) => event.idempotency_key)).size, name).toBe(listed.length)
    }

    // webhook_activity: the buy's fires (reports and the impairment), each with a successful attempt.
    const listed = await mcp('get_media_buys', {
      media_buy_ids: [mediaBuyId],
      include_webhook_activity: true,
      webhook_activity_limit: 100,
    })
    const activity = listed.media_buys[0].webhook_activity as any[]
    const succeeded = new Set(
      activity.filter((row) => row.status === 'success').map((row) => row.idempotency_key),
    )
    for (const event of [...of('reports'), impairment]) expect(succeeded.has(event.idempotencyKey)).toBe(true)
    // The report cut short by the SIGKILL was attempted again by the restarted agent, successfully.
    expect(succeeded.has(heldKey)).toBe(true)
    expect(activity.find((row) => row.idempotency_key === final.idempotencyKey)).toMatchObject({
      notification_type: 'final',
      url: hooks.reports!.url,
    })
  }, 240_000)
})
