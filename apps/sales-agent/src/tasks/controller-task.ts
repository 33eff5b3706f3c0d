/**
 * comply_test_controller (credentials required; sandbox accounts only, see controller/controller.ts) and
 * get_task_status (the caller's async tasks, see async/task-records.ts).
 */
import type { AnyTask } from '@adwire/agent-server'
import { getTaskStatus } from '../async/task-records.js'
import { complyTestController } from '../controller/controller.js'
import type { Seller } from '../seller.js'
import { sellerTask, type DefineOptions } from './define.js'

/**
 * @example
 * controllerTask(seller, { allowInsecureWebhookUrls: false })
 */
export function controllerTask(seller: Seller, options: DefineOptions): AnyTask {
  return sellerTask(
    {
      name: 'comply_test_controller',
      description:
        'Compliance test controller for sandbox accounts: seed products, pricing options, creatives, formats, accounts and media buys; force creative, account and media buy status; simulate delivery and budget spend.',
      request: 'compliance/comply-test-controller-request.json',
      access: 'public',
      handler: (request, context) => complyTestController(seller, request, context),
    },
    options,
  )
}

/**
 * @example
 * taskStatusTask(seller, { allowInsecureWebhookUrls: false })
 */
export function taskStatusTask(seller: Seller, options: DefineOptions): AnyTask {
  return sellerTask(
    {
      name: 'get_task_status',
      description:
        "Reads one of the caller's async tasks (a media buy in review): status, timestamps and, with include_result, the completed response. Needs media_buys:read.",
      request: 'protocol/get-task-status-request.json',
      access: { resource: 'media_buys', permission: 'read' },
      handler: (request, context) => getTaskStatus(seller, request, context),
    },
    options,
  )
}
