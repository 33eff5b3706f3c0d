/**
 * create_media_buy and update_media_buy (media_buys:write, idempotent; a cancel also needs media_buys:delete)
 * and get_media_buys (media_buys:read).
 */
import {
  AgentError,
  type AnyTask,
  type Resource,
  type TaskContext,
  type Permission,
} from '@adwire/agent-server'
import { createMediaBuy } from '../media-buys/create.js'
import { getMediaBuys, type WebhookActivitySource } from '../media-buys/get.js'
import { updateMediaBuy } from '../media-buys/update.js'
import type { Seller } from '../seller.js'
import { sellerTask, type DefineOptions } from './define.js'

/** Throws INSUFFICIENT_PERMISSIONS unless the caller holds `permission` on `resource`. */
export function requirePermission(context: TaskContext, resource: Resource, permission: Permission): void {
  const granted = context.principal?.permissions[resource] ?? []
  if (!granted.includes(permission))
    throw new AgentError('INSUFFICIENT_PERMISSIONS', `this needs ${resource}:${permission}`, {
      status: 403,
      details: { required: `${resource}:${permission}` },
    })
}

/**
 * @example
 * mediaBuyTasks(seller, { allowInsecureWebhookUrls: false })
 */
export function mediaBuyTasks(
  seller: Seller,
  options: DefineOptions,
  activity?: WebhookActivitySource,
): AnyTask[] {
  return [
    sellerTask(
      {
        name: 'create_media_buy',
        description:
          'Creates a media buy from packages of catalog products (budgets, pricing options, flight, creative assignments). Synchronous, or submitted while the seller reviews it when a push_notification_config is given. Needs media_buys:write; idempotent.',
        request: 'media-buy/create-media-buy-request.json',
        access: { resource: 'media_buys', permission: 'write' },
        idempotent: true,
        handler: (request, context) => createMediaBuy(seller, request, context),
      },
      options,
    ),
    sellerTask(
      {
        name: 'update_media_buy',
        description:
          'Pauses, resumes or cancels a media buy, changes budgets, dates, packages and creative assignments, adds packages, or registers a new push_notification_config or reporting_webhook. Needs media_buys:write (and media_buys:delete to cancel); idempotent.',
        request: 'media-buy/update-media-buy-request.json',
        access: { resource: 'media_buys', permission: 'write' },
        idempotent: true,
        handler: (request, context) => {
          if (request.canceled === true) requirePermission(context, 'media_buys', 'delete')
          return updateMediaBuy(seller, request, context)
        },
      },
      options,
    ),
    sellerTask(
      {
        name: 'get_media_buys',
        description:
          "Lists the caller's media buys (by id, status or account; paged) with status, health, impairments, packages and, on request, recent webhook activity. Needs media_buys:read.",
        request: 'media-buy/get-media-buys-request.json',
        access: { resource: 'media_buys', permission: 'read' },
        handler: (request, context) => getMediaBuys(seller, request, context, activity),
      },
      options,
    ),
  ]
}
