/**
 * The sales agent's AdCP tasks, each declared once for @adwire/agent-server (MCP tools and A2A skills), built
 * over the seller's domain.
 */
import type { AnyTask } from '@adwire/agent-server'
import type { TestKitCredential } from '../auth/test-kits.js'
import type { SalesAgentEnv } from '../env.js'
import type { SellerEvents } from '../events/seller-events.js'
import type { Storage } from '../storage/index.js'
import { productSource } from '../catalog/product-source.js'
import type { Seller } from '../seller.js'
import { accountTasks } from './account-tasks.js'
import { capabilitiesTask } from './capabilities-task.js'
import { controllerTask } from './controller-task.js'
import { creativeTasks } from './creative-tasks.js'
import { mediaBuyTasks } from './media-buy-tasks.js'
import { productTasks } from './product-tasks.js'

export interface TaskDeps {
  readonly env: SalesAgentEnv
  readonly publicUrl: string
  readonly storage: Storage
  readonly events: SellerEvents
  /** The test-kit credentials in use (their live handles make live principals). */
  readonly kits: readonly TestKitCredential[]
  /** The current get_adcp_capabilities snapshot. */
  readonly capabilities: () => Record<string, unknown>
  /** Unix seconds: the seller's clock (delivery pacing, flight dates). */
  readonly now: () => number
  /** Runs work after the current call has answered; the service waits for it when closing. */
  readonly background: (work: () => Promise<void>) => void
  readonly log: (entry: Record<string, unknown>) => void
}

/**
 * @example
 * createAgentServer({ tasks: sellerTasks(deps), name: 'adwire-sales-agent', version, url })
 */
export function sellerTasks(deps: TaskDeps): AnyTask[] {
  const options = { allowInsecureWebhookUrls: deps.env.allowInsecureWebhookUrls }
  const seller: Seller = {
    records: deps.storage.records,
    products: productSource(deps.storage.records, deps.env.creativeAgentUrl),
    events: deps.events,
    env: deps.env,
    kits: deps.kits,
    now: deps.now,
    background: deps.background,
    log: deps.log,
    forcedTasks: new Map(),
  }
  return [
    capabilitiesTask(deps.capabilities, options),
    ...productTasks(seller, options),
    ...mediaBuyTasks(seller, options, (buy, principalId, limit) =>
      deps.events.webhookActivity(buy, principalId, limit),
    ),
    ...creativeTasks(seller, options),
    ...accountTasks(seller, options),
    controllerTask(seller, options),
  ]
}
