/** comply_test_controller (credentials required; sandbox accounts only, see controller/controller.ts). */
import type { AnyTask } from '@adwire/agent-server'
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
