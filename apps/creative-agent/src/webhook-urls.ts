/**
 * Where the agent may push webhooks: https URLs on public addresses, checked when the buyer registers (a clear
 * INVALID_REQUEST) and again at every delivery by the pinned fetch (the host's DNS answers, so a name that points
 * inside the network is refused too, and the connection goes to the address that was checked). ALLOW_INSECURE_WEBHOOK_URLS relaxes both to http and loopback/private addresses for
 * local development; cloud metadata addresses stay refused.
 */
import { isIP } from 'node:net'
import { AgentError } from '@adwire/agent-server'
import { checkAddress } from '@adwire/http-signatures'
import { createPinnedFetch, type TargetPolicy } from '@adwire/http-signatures/node'

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

/** Throws INVALID_REQUEST (field `push_notification_config.url`) for an unacceptable webhook URL. */
export function assertWebhookUrl(url: string, allowInsecure: boolean): void {
  const problem = webhookUrlProblem(url, allowInsecure)
  if (problem)
    throw new AgentError('INVALID_REQUEST', `push_notification_config.url ${problem}`, {
      field: 'push_notification_config.url',
    })
}

/**
 * The fetch the webhook sender delivers with: the pinned fetch of `@adwire/http-signatures/node`. The host is
 * resolved once, every answer must pass the address policy, and the socket connects to the checked address, so
 * a name that answers a public address to the check and 127.0.0.1 afterwards (DNS rebinding) cannot reach this
 * host. A refused or failed attempt is retried, then given up, by the sender.
 *
 * @example
 * createWebhookSender({ outbox, key, fetch: webhookFetch({ allowInsecure: false }) })
 */
export function webhookFetch(options: {
  readonly allowInsecure: boolean
  /** Resolves host names (default `node:dns`); the tests inject a rebinding resolver. */
  readonly lookup?: TargetPolicy['lookup']
}): typeof fetch {
  return createPinnedFetch({
    allowHttp: options.allowInsecure,
    ...policy(options.allowInsecure),
    // The sender bounds each attempt with its own signal; this cap only backs it up.
    timeoutMs: 60_000,
    maxBytes: 65_536,
    userAgent: 'adwire-creative-agent',
    ...(options.lookup ? { lookup: options.lookup } : {}),
  })
}
