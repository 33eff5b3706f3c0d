import { SignatureError } from './errors.js'
import type { HeaderFields } from './headers.js'
import { decodePunycode } from './punycode.js'
import type { SignatureProfile } from './types.js'

/** The canonical `@target-uri` and `@authority` of a URL (AdCP URL canonicalization, steps 1 to 8). */
export interface CanonicalTarget {
  /** Scheme, host, port, path and query after the eight steps; no userinfo, default port or fragment. */
  readonly targetUri: string
  /** `host[:port]` as in {@link targetUri}: lower-case A-label host, IPv6 in brackets, default port dropped. */
  readonly authority: string
  readonly scheme: 'http' | 'https'
}

const URI = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(?:#[\s\S]*)?$/
// Characters a WHATWG URL serialiser (what fetch sends) would rewrite, so a signer and a verifier could see
// different bytes: controls, space, non-ASCII and, per component, the percent-encode sets of the URL Standard.
// eslint-disable-next-line no-control-regex
const PATH_FORBIDDEN = /[\u0000-\u0020"<>`{}\\\u007f-\uffff]/
// eslint-disable-next-line no-control-regex
const QUERY_FORBIDDEN = /[\u0000-\u0020"<>'\u007f-\uffff]/
const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/
const NUMERIC_LABEL = /^(?:0x[0-9a-f]*|[0-9]+)$/
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])'
const IPV4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`)
const CACHE_LIMIT = 1024
const cache = new Map<string, CanonicalTarget | string>()

/**
 * Canonicalises a target URI per AdCP URL canonicalization (docs/reference/url-canonicalization.mdx): lower-case
 * scheme; host lower-cased and IDN converted to A-labels with UTS-46 non-transitional processing (via the URL
 * Standard's host parser), one trailing root dot removed; userinfo and default port stripped; unreserved
 * percent-escapes decoded and the rest upper-cased (path and query); dot segments removed with consecutive
 * slashes kept; empty path made `/`; query otherwise byte for byte; fragment dropped.
 *
 * Throws `request_target_uri_malformed` (or `webhook_target_uri_malformed` for `profile: 'webhook'`) for a URL
 * that cannot be canonicalised: no host, userinfo without host, unbracketed or zoned IPv6, empty DNS labels,
 * a scheme other than http(s), or characters a URL serialiser would rewrite.
 *
 * @example
 * canonicalizeTargetUri('HTTPS://user@BÜCHER.example:443/a/./b%7e?b=2&a=1#top')
 * // { targetUri: 'https://xn--bcher-kva.example/a/b~?b=2&a=1', authority: 'xn--bcher-kva.example', scheme: 'https' }
 */
export function canonicalizeTargetUri(url: string, profile: SignatureProfile = 'request'): CanonicalTarget {
  const result = canonicalTarget(url)
  if (typeof result === 'string') throw new SignatureError(`${profile}_target_uri_malformed`, result, 10)
  return result
}

/**
 * Like {@link canonicalizeTargetUri} but returns the reason as a string instead of throwing; results are cached
 * per input (bounded), since receivers see the same few URLs over and over.
 *
 * @example
 * canonicalTarget('https:///p') // 'URL has no host'
 */
export function canonicalTarget(url: string): CanonicalTarget | string {
  const cached = cache.get(url)
  if (cached !== undefined) return cached
  const result = compute(url)
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!)
  cache.set(url, result)
  return result
}

function compute(url: string): CanonicalTarget | string {
  const match = URI.exec(url)
  if (!match) return 'URL is not absolute with an authority'
  const scheme = match[1]!.toLowerCase()
  if (scheme !== 'https' && scheme !== 'http') return `scheme "${scheme}" is not http or https`
  const rawAuthority = match[2]!
  const at = rawAuthority.lastIndexOf('@')
  const authority = canonicalAuthority(at === -1 ? rawAuthority : rawAuthority.slice(at + 1), scheme)
  if (authority.startsWith('!')) return authority.slice(1)
  const path = match[3]!
  if (PATH_FORBIDDEN.test(path)) return 'path holds characters that must be percent-encoded'
  const normalizedPath = normalizePercent(path)
  if (normalizedPath === undefined) return 'path holds a malformed percent-escape'
  const query = match[4]
  let normalizedQuery = ''
  if (query !== undefined) {
    if (QUERY_FORBIDDEN.test(query)) return 'query holds characters that must be percent-encoded'
    const normalized = normalizePercent(query)
    if (normalized === undefined) return 'query holds a malformed percent-escape'
    normalizedQuery = normalized
  }
  const finalPath = normalizedPath === '' ? '/' : removeDotSegments(normalizedPath)
  return { targetUri: `${scheme}://${authority}${finalPath}${normalizedQuery}`, authority, scheme }
}

/**
 * Canonicalises an authority (`host[:port]`, as in a `Host` header or `:authority`) for a scheme; the result
 * starts with `!` and a reason when the authority is malformed. Userinfo is not accepted here.
 *
 * @example
 * canonicalAuthority('Seller.Example:443', 'https') // 'seller.example'
 */
export function canonicalAuthority(hostPort: string, scheme: 'http' | 'https'): string {
  let host: string
  let port: string
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']')
    if (close === -1) return '!IPv6 literal is missing its closing bracket'
    const literal = hostPort.slice(1, close).toLowerCase()
    if (literal.includes('%')) return '!IPv6 zone identifiers are not allowed'
    if (!/^[0-9a-f:.]+$/.test(literal) || !parsesAsHost(`[${literal}]`)) return '!IPv6 literal is malformed'
    host = `[${literal}]`
    const rest = hostPort.slice(close + 1)
    if (rest !== '' && !rest.startsWith(':')) return '!unexpected characters after the IPv6 literal'
    port = rest.slice(1)
  } else {
    const colon = hostPort.indexOf(':')
    if (colon !== -1 && hostPort.indexOf(':', colon + 1) !== -1) return '!IPv6 literal is not in brackets'
    const name = colon === -1 ? hostPort : hostPort.slice(0, colon)
    port = colon === -1 ? '' : hostPort.slice(colon + 1)
    if (name === '') return '!URL has no host'
    const normalized = normalizeHostName(name)
    if (normalized.startsWith('!')) return normalized
    host = normalized
  }
  if (port === '') return host
  if (!/^[0-9]{1,5}$/.test(port) || Number(port) > 65535) return '!port is not a number from 0 to 65535'
  const number = Number(port)
  if ((scheme === 'https' && number === 443) || (scheme === 'http' && number === 80)) return host
  return `${host}:${number}`
}

function normalizeHostName(name: string): string {
  if (name.includes('%')) return '!percent-escapes are not allowed in a host name'
  let ascii: string
  // eslint-disable-next-line no-control-regex
  if (/^[\u0000-\u007f]*$/.test(name)) {
    ascii = name.toLowerCase()
    // The URL Standard's host parser would reinterpret numeric hosts; A-labels ("xn--") are decoded here and
    // their Unicode form sent through its ToASCII, which must give the same name back (runtimes differ on
    // whether `new URL()` validates an A-label itself: Node 24.21 accepts `xn--a`).
    if (ascii.includes('xn--') && !validALabels(ascii)) return '!host holds an invalid A-label'
  } else {
    const converted = whatwgHost(name)
    if (converted === undefined) return '!host is not a valid internationalised domain name'
    ascii = converted
  }
  if (ascii.endsWith('.')) ascii = ascii.slice(0, -1)
  const labels = ascii.split('.')
  if (NUMERIC_LABEL.test(labels[labels.length - 1]!)) {
    return IPV4.test(ascii) ? ascii : '!numeric host is not a dotted-decimal IPv4 address'
  }
  for (const label of labels) {
    if (label === '') return '!host has an empty DNS label'
    if (!LABEL.test(label)) return `!host label "${label}" is not letters, digits and inner hyphens`
    if (label[2] === '-' && label[3] === '-' && !label.startsWith('xn--'))
      return `!host label "${label}" has "--" in positions 3 and 4`
  }
  return ascii
}

/** Whether every `xn--` label of an ASCII host decodes and maps back to itself through ToASCII. */
function validALabels(ascii: string): boolean {
  const unicode = ascii.split('.').map((label) => {
    if (!label.startsWith('xn--')) return label
    const decoded = decodePunycode(label.slice(4))
    // eslint-disable-next-line no-control-regex
    return decoded === undefined || /^[\u0000-\u007f]*$/.test(decoded) ? undefined : decoded
  })
  if (unicode.includes(undefined)) return false
  return whatwgHost(ascii) === ascii && whatwgHost(unicode.join('.')) === ascii
}

function whatwgHost(name: string): string | undefined {
  try {
    return new URL(`https://${name}/`).hostname
  } catch {
    return undefined
  }
}

function parsesAsHost(host: string): boolean {
  return whatwgHost(host) !== undefined
}

const HEX = /^[0-9A-Fa-f]{2}$/

/** Step 6: upper-case hex of every escape, decode escapes of unreserved characters; `undefined` on a bad escape. */
function normalizePercent(text: string): string | undefined {
  let percent = text.indexOf('%')
  if (percent === -1) return text
  let out = ''
  let copied = 0
  while (percent !== -1) {
    const hex = text.slice(percent + 1, percent + 3)
    if (!HEX.test(hex)) return undefined
    const code = parseInt(hex, 16)
    out +=
      text.slice(copied, percent) + (isUnreserved(code) ? String.fromCharCode(code) : `%${hex.toUpperCase()}`)
    copied = percent + 3
    percent = text.indexOf('%', copied)
  }
  return out + text.slice(copied)
}

function isUnreserved(code: number): boolean {
  return (
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x30 && code <= 0x39) ||
    code === 0x2d ||
    code === 0x2e ||
    code === 0x5f ||
    code === 0x7e
  )
}

/** RFC 3986 §5.2.4 on an absolute path; empty segments (consecutive slashes) are kept. */
function removeDotSegments(path: string): string {
  if (!path.includes('.')) return path
  const segments = path.split('/')
  const out: string[] = []
  for (let index = 0; index < segments.length; index += 1) {
    const segment = segments[index]!
    const last = index === segments.length - 1
    if (segment === '.' || segment === '..') {
      if (segment === '..' && out.length > 1) out.pop()
      if (last) out.push('')
      continue
    }
    out.push(segment)
  }
  return out.join('/')
}

/**
 * Whether the URL's authority holds raw non-ASCII characters (an IDN U-label on the wire). A verifier rejects
 * these rather than guess how the signer converted them (request-signing negative vector 026).
 *
 * @example
 * hasNonAsciiAuthority('https://bücher.example/p') // true
 */
export function hasNonAsciiAuthority(url: string): boolean {
  const start = url.indexOf('//')
  if (start === -1) return false
  for (let index = start + 2; index < url.length; index += 1) {
    const code = url.charCodeAt(index)
    if (code === 0x2f || code === 0x3f || code === 0x23) return false
    if (code > 0x7f) return true
  }
  return false
}

// The canonical form of each `:authority` / `Host` value received, by scheme: a sender sends the same few, and
// canonicalAuthority is a pure function of the two (a host name's labels, an IPv4 address, a port each checked).
const AUTHORITY_LIMIT = 1024
const authorities = { http: new Map<string, string>(), https: new Map<string, string>() }

function receivedAuthority(hostPort: string, scheme: 'http' | 'https'): string {
  const known = authorities[scheme]
  const cached = known.get(hostPort)
  if (cached !== undefined) return cached
  const value = canonicalAuthority(hostPort, scheme)
  if (known.size >= AUTHORITY_LIMIT) known.delete(known.keys().next().value!)
  known.set(hostPort, value)
  return value
}

const AUTHORITY_FIELDS = [':authority', 'host']

/**
 * The `@authority` rule of the AdCP profile (security.mdx verifier checklist step 10): the HTTP/2 `:authority`
 * and the HTTP/1.1 `Host` field, when present, must each be sent once, canonicalise to the same value, and equal
 * the authority of the canonical target URI (cross-vhost replay defence). Returns the problem, or `undefined`.
 *
 * @example
 * authorityHeaderProblem(normalizeHeaders({ host: 'other.example' }), canonicalizeTargetUri(url))
 * // 'the received authority other.example is not the signed seller.example'
 */
export function authorityHeaderProblem(fields: HeaderFields, target: CanonicalTarget): string | undefined {
  let derived: string | undefined
  for (const name of AUTHORITY_FIELDS) {
    const values = fields.get(name)
    if (values === undefined) continue
    if (values.length !== 1) return `${name} is sent more than once`
    const value = receivedAuthority(values[0]!.trim(), target.scheme)
    if (value.startsWith('!')) return `${name} is malformed: ${value.slice(1)}`
    if (derived !== undefined && value !== derived) return ':authority and Host differ'
    derived = value
  }
  if (derived !== undefined && derived !== target.authority) {
    return `the received authority ${derived} is not the signed ${target.authority}`
  }
  return undefined
}
