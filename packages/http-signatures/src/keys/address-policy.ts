import ipaddr from 'ipaddr.js'
import { SignatureError } from '../errors.js'

/** Which non-public destinations a fetch may reach. Both default to `false`. */
export interface AddressPolicy {
  /** Allow 127.0.0.0/8 and ::1 (tests, a local development agent). */
  readonly allowLoopback?: boolean
  /** Allow RFC 1918 (10/8, 172.16/12, 192.168/16), unique-local fc00::/7 and CGNAT 100.64/10. */
  readonly allowPrivate?: boolean
}

/** Cloud instance-metadata and platform endpoints: refused whatever the policy says. */
const METADATA = new Set([
  '169.254.169.254', // AWS, GCP, Azure, OpenStack, DigitalOcean
  '169.254.170.2', // AWS ECS task metadata
  '100.100.100.200', // Alibaba Cloud
  '168.63.129.16', // Azure WireServer (a public address)
  '192.0.0.192', // Oracle Cloud
  'fd00:ec2::254', // AWS IPv6 IMDS
])

const PRIVATE_RANGES = new Set(['private', 'uniqueLocal', 'carrierGradeNat'])

/** A destination that passed {@link checkAddress}: what the connection is pinned to. */
export interface PinnedAddress {
  readonly address: string
  readonly family: 4 | 6
}

/**
 * IPv6 prefixes that ipaddr.js calls `unicast` but the IANA IPv6 Special-Purpose Address Registry marks as not
 * globally reachable: the dummy prefix 100:0:0:1::/64 (RFC 9780).
 */
const NOT_GLOBAL_IPV6: readonly (readonly [ipaddr.IPv6, number])[] = [[ipaddr.IPv6.parse('100:0:0:1::'), 64]]

/** An IPv6 literal in the canonical form of the WHATWG URL parser (`::127.0.0.1` becomes `::7f00:1`). */
function canonicalIpv6(literal: string): string | undefined {
  try {
    return new URL(`http://[${literal}]/`).hostname.slice(1, -1)
  } catch {
    return undefined
  }
}

/**
 * Checks one resolved (or literal) IP address against the SSRF rules of AdCP 3.1 security.mdx ("SSRF-safe
 * fetches"): only globally routable unicast is allowed by default; loopback and private ranges only when the
 * policy says so; link-local, multicast, unspecified, broadcast, reserved, documentation, benchmarking,
 * NAT64/6to4/Teredo, AS112/AMT anycast and metadata addresses never (every range of the IANA IPv4 and IPv6
 * special-purpose registries). An IPv4-mapped (`::ffff:a.b.c.d`) or IPv4-compatible (`::a.b.c.d`, `::/96`
 * but `::` and `::1`) IPv6 address is judged by its IPv4 address and is refused whenever that address is not
 * public, even under `allowLoopback`/`allowPrivate`: nothing legitimate resolves to an embedded loopback or
 * private address, and it is the classic way around naive filters.
 *
 * @throws {SignatureError} `fetch_refused`
 * @example
 * checkAddress('93.184.215.14', {}) // { address: '93.184.215.14', family: 4 }
 * checkAddress('10.0.0.1', {}) // throws fetch_refused
 * checkAddress('::127.0.0.1', { allowLoopback: true }) // throws fetch_refused (IPv4-compatible)
 */
export function checkAddress(address: string, policy: AddressPolicy): PinnedAddress {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address
  // ipaddr.js reads `::a.b.c.d` as `::ffff:a.b.c.d`: canonicalise IPv6 first, as a URL or a socket would.
  const literal = bare.includes(':') && !bare.includes('%') ? (canonicalIpv6(bare) ?? bare) : bare
  if (literal.includes('%') || !ipaddr.isValid(literal)) {
    throw new SignatureError('fetch_refused', `"${literal}" is not a plain IP address`)
  }
  const parsed = ipaddr.parse(literal)
  const embedded = embeddedIpv4(parsed)
  const effective = embedded?.ipv4 ?? parsed
  const normalized = effective.toString()
  if (METADATA.has(normalized)) {
    throw new SignatureError('fetch_refused', `address ${normalized} is a cloud metadata endpoint`)
  }
  const range =
    effective.kind() === 'ipv6' &&
    NOT_GLOBAL_IPV6.some(([prefix, bits]) => (effective as ipaddr.IPv6).match(prefix, bits))
      ? 'reserved'
      : effective.range()
  const family = effective.kind() === 'ipv4' ? 4 : 6
  if (range === 'unicast') return { address: normalized, family }
  const allowed =
    embedded === undefined &&
    ((range === 'loopback' && policy.allowLoopback === true) ||
      (PRIVATE_RANGES.has(range) && policy.allowPrivate === true))
  if (!allowed) {
    throw new SignatureError(
      'fetch_refused',
      `address ${literal} is not publicly routable (${embedded ? `${embedded.form} ` : ''}${range})`,
    )
  }
  return { address: normalized, family }
}

/** The IPv4 address inside an IPv4-mapped (`::ffff:0:0/96`) or IPv4-compatible (`::/96`) IPv6 address. */
function embeddedIpv4(
  parsed: ipaddr.IPv4 | ipaddr.IPv6,
): { ipv4: ipaddr.IPv4; form: 'IPv4-mapped' | 'IPv4-compatible' } | undefined {
  if (parsed.kind() !== 'ipv6') return undefined
  const ipv6 = parsed as ipaddr.IPv6
  if (ipv6.isIPv4MappedAddress()) return { ipv4: ipv6.toIPv4Address(), form: 'IPv4-mapped' }
  const parts = ipv6.parts
  const compatible = parts.slice(0, 6).every((part) => part === 0) && (parts[6] !== 0 || parts[7]! > 1)
  if (!compatible) return undefined
  const bytes = ipv6.toByteArray().slice(12)
  return { ipv4: new ipaddr.IPv4(bytes), form: 'IPv4-compatible' }
}
