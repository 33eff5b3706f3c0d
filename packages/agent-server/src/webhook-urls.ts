/**
 * Where an agent may push webhooks: the policy and the pinned fetch are the sender's (`@adwire/webhooks/node`,
 * re-exported here); an agent checks a URL when the buyer registers it, answering INVALID_REQUEST naming the
 * field, and the sender's fetch checks it again at every delivery. `allowInsecure` (the apps'
 * ALLOW_INSECURE_WEBHOOK_URLS) relaxes both to http and loopback/private addresses for local development.
 */
import { webhookUrlProblem } from '@adwire/webhooks/node'
import { AgentError } from './errors.js'

export { webhookFetch, webhookUrlProblem, type WebhookFetchOptions } from '@adwire/webhooks/node'

/**
 * Throws INVALID_REQUEST (HTTP-status hint 400, `field` the registration's URL) for an unacceptable webhook URL.
 *
 * @example
 * assertWebhookUrl(request.push_notification_config.url, env.allowInsecureWebhookUrls)
 */
export function assertWebhookUrl(
  url: string,
  allowInsecure: boolean,
  field = 'push_notification_config.url',
): void {
  const problem = webhookUrlProblem(url, allowInsecure)
  if (problem) throw new AgentError('INVALID_REQUEST', `${field} ${problem}`, { field, status: 400 })
}
