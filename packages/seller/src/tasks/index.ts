/**
 * The sales agent's AdCP tasks, each declared once for @adwire/agent-server (MCP tools and A2A skills), built
 * over the seller's domain.
 */
import type { AnyTask } from '@adwire/agent-server'
import type { WebhookActivitySource } from '../media-buys/get.js'
import type { Seller } from '../seller.js'
import { accountTasks } from './account-tasks.js'
import { capabilitiesTask } from './capabilities-task.js'
import { controllerTask, taskStatusTask } from './controller-task.js'
import { creativeTasks } from './creative-tasks.js'
import { mediaBuyTasks } from './media-buy-tasks.js'
import { productTasks } from './product-tasks.js'

export interface TaskDeps {
  readonly seller: Seller
  /** The current get_adcp_capabilities snapshot. */
  readonly capabilities: () => Record<string, unknown>
  /** webhook_activity for get_media_buys (the event implementation's record of fires). */
  readonly webhookActivity?: WebhookActivitySource
}

/**
 * @example
 * createAgentServer({ tasks: sellerTasks({ seller, capabilities }), name: 'adwire-sales-agent', version, url })
 */
export function sellerTasks(deps: TaskDeps): AnyTask[] {
  const { seller } = deps
  const options = { allowInsecureWebhookUrls: seller.env.allowInsecureWebhookUrls }
  return [
    capabilitiesTask(deps.capabilities, options),
    ...productTasks(seller, options),
    ...mediaBuyTasks(seller, options, deps.webhookActivity),
    ...creativeTasks(seller, options),
    ...accountTasks(seller, options),
    controllerTask(seller, options),
    taskStatusTask(seller, options),
  ]
}
