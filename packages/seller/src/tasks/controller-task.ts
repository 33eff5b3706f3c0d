/**
 * comply_test_controller (credentials required; sandbox accounts only, see controller/controller.ts) and
 * get_task_status (the caller's async tasks, see async/task-records.ts).
 */
import { AgentError, type AnyTask } from '@adwire/agent-server'
import { getTaskStatus } from '../async/task-records.js'
import { complyTestController } from '../controller/controller.js'
import type { Seller } from '../seller.js'
import { officialProblem } from '../validation/official.js'
import { sellerTask, type DefineOptions } from './define.js'

const CONTROLLER_REQUEST = 'compliance/comply-test-controller-request.json'

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
      // A request with a fault in `params` reaches the controller, which answers INVALID_PARAMS in its own error
      // shape (deterministic-testing missing_params; the 3.0 runner's request also lacks the `account` 3.1.19
      // requires, and is refused all the same); any other fault is INVALID_REQUEST before it runs.
      request: (request) => {
        // Off unless the operator turned it on (COMPLY_TEST_CONTROLLER=1): a production seller has no controller.
        if (!seller.env.complyTestController)
          throw new AgentError(
            'UNSUPPORTED_FEATURE',
            'comply_test_controller is not enabled on this agent (the operator turns it on with COMPLY_TEST_CONTROLLER=1, test deployments only)',
            { status: 422 },
          )
        const problem = officialProblem(CONTROLLER_REQUEST, request)
        const inParams = (path: string) => /^params(\.|\[|$)/.test(path)
        const outside = problem?.issues.find((issue) => !inParams(issue.path))
        if (problem && outside && !problem.issues.some((issue) => inParams(issue.path)))
          throw new AgentError('INVALID_REQUEST', problem.message, {
            ...(outside.path ? { field: outside.path } : {}),
            status: 400,
          })
      },
      declares: CONTROLLER_REQUEST,
      access: { resource: 'media_buys', permission: 'write' },
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
