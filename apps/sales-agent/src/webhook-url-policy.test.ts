/**
 * The webhook URL policy wherever the sales agent takes a webhook URL, over the official MCP and A2A clients
 * on 127.0.0.1: a URL with a `user:password@` userinfo is refused (INVALID_REQUEST naming the field) for
 * push_notification_config, reporting_webhook, account and agent notification_configs and A2A
 * `taskPushNotificationConfig`, even with ALLOW_INSECURE_WEBHOOK_URLS on; without it the A2A registration,
 * like push_notification_config, must be https on a public address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from './service.js'
import {
  ACCOUNT,
  BUYER_TOKEN,
  a2aSend,
  artifactData,
  buyRequest,
  mcpFails,
  newKey,
  startTestAgent,
} from './test-support.js'

const WITH_USER = 'https://user:secret@buyer.example/hooks'
let agent: RunningSalesAgent
let strict: RunningSalesAgent

beforeAll(async () => {
  agent = await startTestAgent()
  strict = await startTestAgent({ ALLOW_INSECURE_WEBHOOK_URLS: '0' })
})
afterAll(async () => {
  await agent.close()
  await strict.close()
})

const notificationConfig = (url: string, type = 'creative.purged') => ({
  subscriber_id: 'buyer-primary',
  url,
  event_types: [type],
})

describe('webhook URLs with a userinfo', () => {
  it('are refused in push_notification_config and reporting_webhook', async () => {
    for (const [field, registration] of [
      ['push_notification_config', { url: WITH_USER, operation_id: 'op-1' }],
      [
        'reporting_webhook',
        {
          url: WITH_USER,
          authentication: { schemes: ['HMAC-SHA256'], credentials: 'x'.repeat(40) },
          reporting_frequency: 'daily',
        },
      ],
    ] as const) {
      const error = await mcpFails(
        agent,
        BUYER_TOKEN,
        'create_media_buy',
        buyRequest({ [field]: registration }),
        'INVALID_REQUEST',
      )
      expect([error.field, error.message]).toEqual([`${field}.url`, expect.stringContaining('credentials')])
    }
  })

  it('are refused in account and agent notification_configs', async () => {
    const account = await mcpFails(
      agent,
      BUYER_TOKEN,
      'sync_accounts',
      {
        idempotency_key: newKey(),
        accounts: [
          { ...ACCOUNT, billing: 'operator', notification_configs: [notificationConfig(WITH_USER)] },
        ],
      },
      'INVALID_REQUEST',
    )
    expect(account.field).toBe('accounts[0].notification_configs[0].url')
    const agentLevel = await mcpFails(
      agent,
      BUYER_TOKEN,
      'sync_agent_notification_configs',
      { notification_configs: [notificationConfig(WITH_USER, 'capabilities.changed')] },
      'INVALID_REQUEST',
    )
    expect(agentLevel.field).toBe('notification_configs[0].url')
  })

  it('are refused in an A2A taskPushNotificationConfig, as http and local addresses are without the flag', async () => {
    for (const [target, url] of [
      [agent, WITH_USER],
      [strict, 'http://buyer.example/hooks'],
      [strict, 'https://127.0.0.1/hooks'],
    ] as const) {
      const task = await a2aSend(target, BUYER_TOKEN, 'get_adcp_capabilities', {}, { url })
      expect(artifactData(task).adcp_error).toMatchObject({
        code: 'INVALID_REQUEST',
        field: 'configuration.taskPushNotificationConfig.url',
      })
    }
    const accepted = await a2aSend(
      strict,
      BUYER_TOKEN,
      'get_adcp_capabilities',
      {},
      {
        url: 'https://buyer.example/hooks',
      },
    )
    expect(artifactData(accepted).adcp_error).toBeUndefined()
  })
})
