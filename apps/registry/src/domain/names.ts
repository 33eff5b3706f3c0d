import { canonicalizeTargetUri } from '@adwire/http-signatures/internal'

/**
 * Domain names and agent URLs as the registry keys them: lowercased, trimmed, without scheme, path, port or
 * trailing dot for domains; lowercased scheme and host, no trailing slash for agent URLs (adcp-notes §8 #9:
 * canonical comparison for registry lookups).
 */

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

/**
 * The registry key of a domain, or `undefined` when it is not a plausible host name. Accepts a bare host or a
 * URL (its host is taken); a `www.` prefix is kept (it is a different host).
 *
 * @example
 * normalizeDomain(' Example.COM. ') // 'example.com'
 * normalizeDomain('https://pub.example/path') // 'pub.example'
 * normalizeDomain('not a domain') // undefined
 */
export function normalizeDomain(input: unknown): string | undefined {
  if (typeof input !== 'string') return undefined
  let value = input.trim().toLowerCase()
  if (value === '' || value.length > 253) return undefined
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(value)) {
    if (!URL.canParse(value)) return undefined
    value = new URL(value).hostname
  }
  value = value.replace(/\.$/, '')
  const labels = value.split('.')
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return undefined
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return undefined
  if (value.includes('xn--') && !validALabels(value)) return undefined
  return value
}

/** Whether every `xn--` label decodes as Punycode and maps back to itself (`xn--zz.com` does not). */
function validALabels(host: string): boolean {
  try {
    canonicalizeTargetUri(`https://${host}/`)
    return true
  } catch {
    return false
  }
}

/**
 * The canonical form of an agent URL: scheme and host lowercased, default port and trailing slashes dropped,
 * query and fragment dropped. Returns the trimmed input when it is not a URL.
 *
 * @example
 * canonicalAgentUrl('HTTPS://Sales.Example.com/mcp/') // 'https://sales.example.com/mcp'
 */
export function canonicalAgentUrl(input: string): string {
  const trimmed = input.trim()
  if (!URL.canParse(trimmed)) return trimmed.toLowerCase().replace(/\/+$/, '')
  const url = new URL(trimmed)
  const path = url.pathname.replace(/\/+$/, '')
  return `${url.protocol}//${url.host}${path}`
}

/** Whether a string is an absolute http(s) URL. */
export function isHttpUrl(value: unknown): value is string {
  return typeof value === 'string' && URL.canParse(value) && /^https?:$/.test(new URL(value).protocol)
}
