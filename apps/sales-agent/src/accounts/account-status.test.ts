/**
 * An account's status change is pushed, not only logged: to the owner's agent-level notification configs that
 * list `account.status_changed` (the seed's account-status-changed webhook; 3.1.19 refuses the type on
 * account-level configs), signed (RFC 9421) and received once by a receiver from @adwire/webhooks; a config that
 * does not list it gets nothing, and account-level configs still refuse the type.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { RunningSalesAgent } from '../service.js'
import { startBuyerReceiver, type BuyerReceiver } from '../testing/buyer-receiver.js'
import { ACCOUNT, KIT_SANDBOX, mcpFails, mcpOk, newKey, startTestAgent } from '../test-support.js'

let agent: RunningSalesAgent
let buyer: BuyerReceiver

beforeAll(async () => {
  agent = await startTestAgent()
  buyer = await startBuyerReceiver(agent.url)
})
afterAll(async () => {
  await agent?.close()
  await buyer?.close()
})

const control = (scenario: string, params: Record<string, unknown>) =>
  mcpOk(
    agent,
    KIT_SANDBOX,
    'comply_test_controller',
    { scenario, params, account: { sandbox: true } },
    'compliance/comply-test-controller-response.json',
  )

it('pushes account.status_changed to the agent-level configs that list it', async () => {
  await mcpOk(
    agent,
    KIT_SANDBOX,
    'sync_agent_notification_configs',
    {
      notification_configs: [
        {
          subscriber_id: 'accounts',
          url: `${buyer.origin}/hooks/account-status-changed/kit`,
          event_types: ['account.status_changed'],
        },
        {
          subscriber_id: 'caps-only',
          url: `${buyer.origin}/hooks/capabilities-changed/kit`,
          event_types: ['capabilities.changed'],
        },
      ],
    },
    'core/protocol-envelope.json',
  )
  expect(await control('seed_account', { account_id: 'acct_status_push', fixture: {} })).toMatchObject({
    success: true,
  })
  expect(
    await control('force_account_status', { account_id: 'acct_status_push', status: 'suspended' }),
  ).toMatchObject({ success: true, previous_state: 'active', current_state: 'suspended' })
  await buyer.waitFor((events) =>
    events.some((event) => event.registrationId === 'hooks-account-status-changed-kit'),
  )
  const pushed = buyer.published.filter(
    (event) => event.registrationId === 'hooks-account-status-changed-kit',
  )
  expect(pushed).toHaveLength(1)
  expect(pushed[0]!.payload).toMatchObject({
    notification_type: 'account.status_changed',
    subscriber_id: 'accounts',
    account_id: 'acct_status_push',
    transition: { from: 'active', to: 'suspended' },
  })
  expect(buyer.deliveries.some((delivery) => delivery.path.includes('capabilities-changed'))).toBe(false)
})

it('account-level configs still refuse account.status_changed (3.1.19)', async () => {
  const error = await mcpFails(
    agent,
    KIT_SANDBOX,
    'sync_accounts',
    {
      idempotency_key: newKey(),
      accounts: [
        {
          ...ACCOUNT,
          billing: 'operator',
          notification_configs: [
            { subscriber_id: 's', url: `${buyer.origin}/x`, event_types: ['account.status_changed'] },
          ],
        },
      ],
    },
    'INVALID_REQUEST',
  )
  expect(error.field).toBe('accounts[0].notification_configs[0].event_types[0]')
})
