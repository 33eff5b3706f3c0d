/**
 * The account-level and agent-level tasks: sync_accounts and list_accounts, sync_governance, sync_principal
 * and sync_agent_notification_configs (their request shapes from the seed: 3.1.19 has no schema for them),
 * plus get_media_buy_delivery (reports:read) and provide_performance_feedback (media_buys:write).
 */
import { AgentError, type AnyTask } from '@adwire/agent-server'
import { checkAgentConfigs, putAgentConfigs, syncGovernance } from '../accounts/governance.js'
import { listAccounts, syncAccounts } from '../accounts/sync-accounts.js'
import { getMediaBuyDelivery } from '../delivery/get-delivery.js'
import { provideFeedback } from '../media-buys/feedback.js'
import { isObject, ownerOf, type Seller } from '../seller.js'
import { sellerTask, type DefineOptions, type Request } from './define.js'

const configsOf = (value: unknown) => (Array.isArray(value) ? value.filter(isObject) : [])

/**
 * @example
 * accountTasks(seller, { allowInsecureWebhookUrls: false })
 */
export function accountTasks(seller: Seller, options: DefineOptions): AnyTask[] {
  const task = (spec: Parameters<typeof sellerTask>[0]) => sellerTask(spec, options)
  return [
    task({
      name: 'get_media_buy_delivery',
      description:
        "Reports delivery of the caller's media buys (impressions, spend, clicks, viewability, video completions) with totals, per-package rows, daily breakdowns and daily windows. Needs reports:read.",
      request: 'media-buy/get-media-buy-delivery-request.json',
      access: { resource: 'reports', permission: 'read' },
      handler: (request, context) => getMediaBuyDelivery(seller, request, context),
    }),
    task({
      name: 'provide_performance_feedback',
      description:
        "Records the buyer's performance index for a media buy, package or creative. Needs media_buys:write; idempotent.",
      request: 'media-buy/provide-performance-feedback-request.json',
      access: { resource: 'media_buys', permission: 'write' },
      idempotent: true,
      handler: (request, context) => provideFeedback(seller, request, context),
    }),
    task({
      name: 'sync_accounts',
      description:
        'Creates or updates buyer-declared accounts (brand + operator) with billing and account-level notification_configs. Needs media_buys:write; idempotent.',
      request: 'account/sync-accounts-request.json',
      access: { resource: 'media_buys', permission: 'write' },
      idempotent: true,
      handler: (request, context) => syncAccounts(seller, request, context),
    }),
    task({
      name: 'list_accounts',
      description: "Lists the caller's accounts with status and notification_configs. Needs media_buys:read.",
      request: 'account/list-accounts-request.json',
      access: { resource: 'media_buys', permission: 'read' },
      handler: (request, context) => listAccounts(seller, request, context),
    }),
    task({
      name: 'sync_governance',
      description:
        "Registers the governance agent the seller checks each account's buys with. Needs media_buys:write; idempotent.",
      request: 'account/sync-governance-request.json',
      access: { resource: 'media_buys', permission: 'write' },
      idempotent: true,
      handler: (request, context) => syncGovernance(seller, request, context),
    }),
    task({
      name: 'sync_principal',
      description:
        "Sets the caller's agent-level configuration: configuration.notification_configs[] (capabilities.changed). Needs media_buys:write.",
      request: (request: Request) => {
        if (!isObject(request.configuration))
          throw new AgentError('INVALID_REQUEST', 'configuration is required', {
            field: 'configuration',
            status: 400,
          })
        if (request.configuration.notification_configs !== undefined)
          checkAgentConfigs(request.configuration.notification_configs, 'configuration.')
      },
      declares: {
        properties: {
          configuration: {
            type: 'object',
            description: 'The agent-level configuration; notification_configs[] replaces the stored list.',
            properties: { notification_configs: { type: 'array', items: { type: 'object' } } },
          },
        },
        required: ['configuration'],
      },
      access: { resource: 'media_buys', permission: 'write' },
      handler: async (request, context) => {
        const configuration = request.configuration as Record<string, unknown>
        const stored = await putAgentConfigs(seller, context, configsOf(configuration.notification_configs))
        return {
          principal_id: ownerOf(context),
          configuration: { notification_configs: stored.notification_configs },
        }
      },
    }),
    task({
      name: 'sync_agent_notification_configs',
      description:
        "Replaces the caller's agent-level notification_configs[] (capabilities.changed). Needs media_buys:write.",
      request: (request: Request) => checkAgentConfigs(request.notification_configs, ''),
      declares: {
        properties: {
          notification_configs: {
            type: 'array',
            description: "Replaces the caller's agent-level notification configs.",
            items: { type: 'object' },
          },
        },
      },
      access: { resource: 'media_buys', permission: 'write' },
      handler: async (request, context) => {
        const stored = await putAgentConfigs(seller, context, configsOf(request.notification_configs))
        return { notification_configs: stored.notification_configs }
      },
    }),
  ]
}
