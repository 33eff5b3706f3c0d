/**
 * Where an agent may push webhooks (AdCP security: push URLs are https on public addresses, and carry no
 * credentials in a `user:password@` userinfo, which would be logged and echoed wherever the URL is): checked when the
 * buyer registers (a clear INVALID_REQUEST naming the field) and again at every delivery by the address-pinned
 * fetch of `@adwire/http-signatures/node` (the host is resolved once, every answer must pass the policy, and the
 * socket connects to the checked address, so DNS rebinding cannot reach the agent's own network).
 * `allowInsecure` (the apps' ALLOW_INSECURE_WEBHOOK_URLS) relaxes both to http and loopback/private addresses
 * for local development; cloud metadata addresses stay refused.
 */
import { isIP } from 'node:net'
import { checkAddress } from '@adwire/http-signatures'
import { createPinnedFetch, type TargetPolicy } from '@adwire/http-signatures/node'
import { AgentError } from './errors.js'

const policy = (allowInsecure: boolean) => ({ allowLoopback: allowInsecure, allowPrivate: allowInsecure })
const bareHost = (hostname: string) => hostname.replace(/^\[|\]$/g, '')

/**
 * Why `url` is not an acceptable webhook destination, or undefined when it is (no DNS lookup: names are
 * checked at delivery).
 *
 * @example
 * webhookUrlProblem('http://buyer.example/hook', false) // 'must be https'
 */
export function webhookUrlProblem(url: string, allowInsecure: boolean): string | undefined {
  if (!URL.canParse(url)) return 'is not an absolute URL'
  const parsed = new URL(url)
  if (parsed.protocol !== 'https:' && !(allowInsecure && parsed.protocol === 'http:'))
    return allowInsecure ? 'must be http(s)' : 'must be https'
  // Also an empty one (`https://@host/`), which the parsed URL no longer shows; the dev flag never allows it.
  if (parsed.username !== '' || parsed.password !== '' || /^[a-z][a-z\d+.-]*:\/\/[^/?#]*@/i.test(url.trim()))
    return 'must not carry credentials (user:password@)'
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

/** Options of {@link webhookFetch}. */
export interface WebhookFetchOptions {
  readonly allowInsecure: boolean
  /** Sent as `User-Agent`. */
  readonly userAgent?: string
  /** Resolves host names (default `node:dns`); tests inject a rebinding resolver. */
  readonly lookup?: TargetPolicy['lookup']
}

/**
 * The fetch a webhook sender delivers with: the pinned fetch under the webhook URL policy. A refused or failed
 * attempt is retried, then given up, by the sender.
 *
 * @example
 * createWebhookSender({ outbox, key, fetch: webhookFetch({ allowInsecure: false }) })
 */
export function webhookFetch(options: WebhookFetchOptions): typeof fetch {
  return createPinnedFetch({
    allowHttp: options.allowInsecure,
    ...policy(options.allowInsecure),
    // The sender bounds each attempt with its own signal; this cap only backs it up.
    timeoutMs: 60_000,
    maxBytes: 65_536,
    userAgent: options.userAgent ?? 'adwire-agent-server',
    ...(options.lookup ? { lookup: options.lookup } : {}),
  })
}
