/**
 * Where the agent may push webhooks: https URLs on public addresses, checked when the buyer registers (a clear
 * INVALID_REQUEST) and again before every delivery (the host's DNS answers, so a name that points inside the
 * network is refused too). ALLOW_INSECURE_WEBHOOK_URLS relaxes both to http and loopback/private addresses for
 * local development; cloud metadata addresses stay refused.
 */
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { AgentError } from '@adwire/agent-server'
import { checkAddress } from '@adwire/http-signatures'

const policy = (allowInsecure: boolean) => ({ allowLoopback: allowInsecure, allowPrivate: allowInsecure })
const bareHost = (hostname: string) => hostname.replace(/^\[|\]$/g, '')

/** Why `url` is not an acceptable webhook destination, or undefined when it is (no DNS lookup). */
export function webhookUrlProblem(url: string, allowInsecure: boolean): string | undefined {
  if (!URL.canParse(url)) return 'is not an absolute URL'
  const parsed = new URL(url)
  if (parsed.protocol !== 'https:' && !(allowInsecure && parsed.protocol === 'http:'))
    return allowInsecure ? 'must be http(s)' : 'must be https'
  const host = bareHost(parsed.hostname)
  if (!allowInsecure && (host === 'localhost' || host.endsWith('.localhost')))
    return 'must not point at this host'
  if (isIP(host)) {
    try {
      checkAddress(host, policy(allowInsecure))
    } catch {
      return 'must be a public address'
    }
  }
  return undefined
}

/** Throws INVALID_REQUEST (field: the registration's url) for an unacceptable webhook URL. */
export function assertWebhookUrl(
  url: string,
  allowInsecure: boolean,
  field = 'push_notification_config.url',
): void {
  const problem = webhookUrlProblem(url, allowInsecure)
  if (problem) throw new AgentError('INVALID_REQUEST', `${field} ${problem}`, { field, status: 400 })
}

/**
 * The fetch the webhook sender delivers with: the URL is checked again and every address the host resolves to
 * must pass the address policy, else the attempt fails (and is retried, then given up, by the sender).
 *
 * @example
 * createWebhookSender({ outbox, key, fetch: guardedWebhookFetch(false) })
 */
export function guardedWebhookFetch(allowInsecure: boolean): typeof fetch {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input)
    const problem = webhookUrlProblem(url, allowInsecure)
    if (problem) throw new TypeError(`webhook URL refused: it ${problem}`)
    const host = bareHost(new URL(url).hostname)
    if (!isIP(host)) {
      const addresses = await lookup(host, { all: true })
      for (const { address } of addresses) checkAddress(address, policy(allowInsecure))
    }
    return fetch(input, init)
  }
}
