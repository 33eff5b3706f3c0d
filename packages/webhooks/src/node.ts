/**
 * The Node sender defaults: where a seller may push webhooks (AdCP security: https on public addresses, no
 * `user:password@` userinfo) and the address-pinned fetch that enforces it at every delivery (the host is
 * resolved once, every answer must pass the policy, and the socket connects to the checked address, so DNS
 * rebinding cannot reach the seller's own network). `createNodeWebhookSender` is `createWebhookSender` with that
 * fetch as its default. `allowInsecure` relaxes the policy to http and loopback/private addresses for local
 * development; cloud metadata addresses stay refused.
 */
import { isIP } from 'node:net'
import { checkAddress } from '@adwire/http-signatures'
import { createPinnedFetch, type TargetPolicy } from '@adwire/http-signatures/node'
import { createWebhookSender } from './sender/sender.js'
import type { WebhookSender, WebhookSenderOptions } from './sender/types.js'

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
    userAgent: options.userAgent ?? 'adwire-webhooks',
    ...(options.lookup ? { lookup: options.lookup } : {}),
  })
}

/** {@link createNodeWebhookSender}'s options: the sender's, with the URL policy of its default fetch. */
export interface NodeWebhookSenderOptions extends WebhookSenderOptions {
  /** Allow http and loopback/private destinations (local development only). Default false. */
  readonly allowInsecureUrls?: boolean
  /** Sent as `User-Agent` by the default fetch. */
  readonly userAgent?: string
}

/**
 * A webhook sender whose deliveries go through the pinned fetch under the webhook URL policy, unless `fetch`
 * is given.
 *
 * @example
 * const sender = createNodeWebhookSender({ outbox: stores.outbox, key: privateJwk })
 */
export function createNodeWebhookSender(options: NodeWebhookSenderOptions): WebhookSender {
  const { allowInsecureUrls = false, userAgent, ...rest } = options
  return createWebhookSender({
    ...rest,
    fetch:
      options.fetch ??
      webhookFetch({ allowInsecure: allowInsecureUrls, ...(userAgent ? { userAgent } : {}) }),
  })
}
