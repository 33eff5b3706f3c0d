/** get_adcp_capabilities: public; the current snapshot (see capabilities.ts). */
import type { AnyTask } from '@adwire/agent-server'
import { sellerTask, type DefineOptions } from './define.js'

/**
 * @example
 * capabilitiesTask(() => snapshot, { allowInsecureWebhookUrls: false })
 */
export function capabilitiesTask(current: () => Record<string, unknown>, options: DefineOptions): AnyTask {
  return sellerTask(
    {
      name: 'get_adcp_capabilities',
      description:
        'Describes this sales agent: AdCP versions, the media-buy protocol, accounts, idempotency, webhook signing, identity and the compliance test scenarios.',
      request: 'protocol/get-adcp-capabilities-request.json',
      access: 'public',
      handler: () => ({ ...current() }),
    },
    options,
  )
}
