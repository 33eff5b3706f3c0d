/**
 * Accounts and registrations through the official MCP client: sync_accounts (created, updated, unchanged),
 * account-level notification_configs (persisted, replaced, cleared; media-buy-anchored event types and duplicate
 * subscriber ids rejected per account), list_accounts, sync_governance, sync_principal and
 * sync_agent_notification_configs, provide_performance_feedback. Official schemas where 3.1.19 has them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import {
  ACCOUNT,
  BUYER_TOKEN,
  KIT_SANDBOX,
  buyRequest,
  mcpFails,
  mcpOk,
  newKey,
  startTestAgent,
  type Body,
} from '../test-support.js'

const SYNC = 'account/sync-accounts-response.json'
const LIST = 'account/list-accounts-response.json'
let agent: RunningSalesAgent

beforeAll(async () => {
  agent = await startTestAgent()
})
afterAll(() => agent.close())

const syncAccounts = (accounts: Body[], context?: Body) =>
  mcpOk(
    agent,
    BUYER_TOKEN,
    'sync_accounts',
    { idempotency_key: newKey(), accounts, ...(context ? { context } : {}) },
    SYNC,
  )
const config = (id: string, url: string, types: string[], extra: Body = {}) => ({
  subscriber_id: id,
  url,
  event_types: types,
  ...extra,
})

describe('sync_accounts and list_accounts', () => {
  it('creates, updates and leaves unchanged, keeping notification_configs per subscriber', async () => {
    const entry = { ...ACCOUNT, billing: 'operator', payment_terms: 'net_30' }
    const created = await syncAccounts(
      [
        {
          ...entry,
          notification_configs: [
            config(
              'buyer-primary',
              'https://example.com/hooks/a',
              ['creative.status_changed', 'creative.purged'],
              { active: false },
            ),
            config('buyer-backup', 'https://example.com/hooks/b', ['creative.purged']),
          ],
        },
      ],
      { correlation_id: 'acct-1' },
    )
    expect(created.context).toEqual({ correlation_id: 'acct-1' })
    const account = created.accounts[0]
    expect(account).toMatchObject({
      action: 'created',
      status: 'active',
      account_id: expect.stringMatching(/^acct_/),
    })
    expect(account.notification_configs.map((c: Body) => [c.subscriber_id, c.active])).toEqual([
      ['buyer-primary', false],
      ['buyer-backup', true],
    ])
    const again = await syncAccounts([{ ...entry, notification_configs: account.notification_configs }])
    expect(again.accounts[0].action).toBe('unchanged')
    const cleared = await syncAccounts([{ ...entry, notification_configs: [] }])
    expect(cleared.accounts[0]).toMatchObject({ action: 'updated', notification_configs: [] })

    const listed = await mcpOk(agent, BUYER_TOKEN, 'list_accounts', { account: ACCOUNT }, LIST)
    expect(listed.accounts).toHaveLength(1)
    expect(listed.accounts[0]).toMatchObject({
      account_id: account.account_id,
      billing: 'operator',
      notification_configs: [],
    })
  })

  it('rejects a media-buy-anchored event type and a duplicate subscriber per account', async () => {
    const scoped = await syncAccounts([
      {
        ...ACCOUNT,
        billing: 'operator',
        notification_configs: [config('s', 'https://example.com/h', ['scheduled'])],
      },
    ])
    expect(scoped.accounts[0]).toMatchObject({ action: 'failed', status: 'rejected' })
    expect(scoped.accounts[0].errors[0]).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'notification_configs[0].event_types[0]',
    })
    const duplicate = await syncAccounts([
      {
        ...ACCOUNT,
        billing: 'operator',
        notification_configs: [
          config('same', 'https://example.com/1', ['creative.purged']),
          config('same', 'https://example.com/2', ['creative.purged']),
        ],
      },
    ])
    expect(duplicate.accounts[0].errors[0].field).toBe('notification_configs[1].subscriber_id')
  })

  it('refuses a billing party the seller does not offer, per account (BILLING_NOT_SUPPORTED)', async () => {
    const refused = await syncAccounts([{ ...ACCOUNT, billing: 'advertiser' }])
    expect(refused.accounts[0]).toMatchObject({ action: 'failed', status: 'rejected' })
    expect(refused.accounts[0].errors[0]).toMatchObject({
      code: 'BILLING_NOT_SUPPORTED',
      recovery: 'correctable',
      details: { scope: 'capability', supported_billing: ['operator', 'agent'] },
    })
  })

  it('marks test-kit sandbox accounts as sandbox', async () => {
    const response = await mcpOk(
      agent,
      KIT_SANDBOX,
      'sync_accounts',
      { idempotency_key: newKey(), accounts: [{ ...ACCOUNT, billing: 'operator' }] },
      SYNC,
    )
    expect(response.accounts[0].sandbox).toBe(true)
  })
})

describe('governance and agent-level registrations', () => {
  it('stores the governance agent of an account', async () => {
    const response = await mcpOk(
      agent,
      BUYER_TOKEN,
      'sync_governance',
      {
        idempotency_key: newKey(),
        accounts: [
          {
            account: ACCOUNT,
            governance_agents: [
              {
                url: 'https://governance.example',
                authentication: { schemes: ['Bearer'], credentials: 'x'.repeat(40) },
              },
            ],
          },
        ],
      },
      'account/sync-governance-response.json',
    )
    expect(response.accounts[0]).toMatchObject({
      status: 'synced',
      governance_agents: [{ url: 'https://governance.example' }],
    })
  })

  it('keeps agent-level configs for capabilities.changed and refuses other event types', async () => {
    const configs = [config('caps', 'https://example.com/caps', ['capabilities.changed'])]
    const principal = await mcpOk(
      agent,
      BUYER_TOKEN,
      'sync_principal',
      { configuration: { notification_configs: configs } },
      'core/protocol-envelope.json',
    )
    expect(principal).toMatchObject({
      principal_id: 'buyer-1',
      configuration: { notification_configs: [{ subscriber_id: 'caps', active: true }] },
    })
    const direct = await mcpOk(
      agent,
      BUYER_TOKEN,
      'sync_agent_notification_configs',
      { notification_configs: configs },
      'core/protocol-envelope.json',
    )
    expect(direct.notification_configs).toHaveLength(1)
    const error = await mcpFails(
      agent,
      BUYER_TOKEN,
      'sync_agent_notification_configs',
      { notification_configs: [config('x', 'https://example.com/x', ['creative.purged'])] },
      'INVALID_REQUEST',
    )
    expect(error.field).toBe('notification_configs[0].event_types[0]')
    await mcpFails(
      agent,
      undefined,
      'sync_agent_notification_configs',
      { notification_configs: configs },
      'AUTH_REQUIRED',
    )
    const insecure = await startTestAgent({ ALLOW_INSECURE_WEBHOOK_URLS: '0' })
    try {
      const refused = await mcpFails(
        insecure,
        BUYER_TOKEN,
        'sync_agent_notification_configs',
        { notification_configs: [config('x', 'http://127.0.0.1:9/hook', ['capabilities.changed'])] },
        'INVALID_REQUEST',
      )
      expect(refused.field).toBe('notification_configs[0].url')
    } finally {
      await insecure.close()
    }
  })
})

describe('provide_performance_feedback', () => {
  it("records feedback on the caller's buy and refuses unknown buys", async () => {
    const buy = await mcpOk(
      agent,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest(),
      'media-buy/create-media-buy-response.json',
    )
    const request = {
      idempotency_key: newKey(),
      media_buy_id: buy.media_buy_id,
      measurement_period: { start: '2031-01-01T00:00:00Z', end: '2031-01-02T00:00:00Z' },
      performance_index: 1.3,
    }
    const response = await mcpOk(
      agent,
      BUYER_TOKEN,
      'provide_performance_feedback',
      request,
      'media-buy/provide-performance-feedback-response.json',
    )
    expect(response.success).toBe(true)
    await mcpFails(
      agent,
      BUYER_TOKEN,
      'provide_performance_feedback',
      { ...request, idempotency_key: newKey(), media_buy_id: 'mb_none' },
      'MEDIA_BUY_NOT_FOUND',
    )
  })
})
