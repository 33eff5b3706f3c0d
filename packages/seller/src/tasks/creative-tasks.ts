/** sync_creatives (creatives:write, idempotent) and list_creatives (creatives:read). */
import type { AnyTask } from '@adwire/agent-server'
import { listCreatives, syncCreatives } from '../creatives/sync.js'
import type { Seller } from '../seller.js'
import { sellerTask, type DefineOptions } from './define.js'

/**
 * @example
 * creativeTasks(seller, { allowInsecureWebhookUrls: false })
 */
export function creativeTasks(seller: Seller, options: DefineOptions): AnyTask[] {
  return [
    sellerTask(
      {
        name: 'sync_creatives',
        description:
          "Uploads or updates creatives in the seller's library with per-creative action and review status, optionally assigning them to packages. Needs creatives:write; idempotent.",
        request: 'creative/sync-creatives-request.json',
        access: { resource: 'creatives', permission: 'write' },
        idempotent: true,
        handler: (request, context) => syncCreatives(seller, request, context),
      },
      options,
    ),
    sellerTask(
      {
        name: 'list_creatives',
        description:
          "Lists the caller's creatives with their review status (filters, pagination, soft-purge tombstones). Needs creatives:read.",
        request: 'creative/list-creatives-request.json',
        access: { resource: 'creatives', permission: 'read' },
        handler: (request, context) => listCreatives(seller, request, context),
      },
      options,
    ),
  ]
}
