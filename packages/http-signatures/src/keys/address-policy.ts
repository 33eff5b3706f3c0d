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
 * Checks one resolved (or literal) IP address against the SSRF rules of AdCP 3.1 security.mdx ("SSRF-safe
 * fetches"): only globally routable unicast is allowed by default; loopback and private ranges only when the
 * policy says so; link-local, multicast, unspecified, broadcast, reserved, NAT64/6to4/Teredo and metadata
 * addresses never. An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is judged by its IPv4 address and is refused
 * whenever that address is not public, even under `allowLoopback`/`allowPrivate`: nothing legitimate resolves
 * to a mapped loopback or private address, and it is the classic way around naive filters.
 *
 * @throws {SignatureError} `fetch_refused`
 * @example
 * checkAddress('93.184.215.14', {}) // { address: '93.184.215.14', family: 4 }
 * checkAddress('10.0.0.1', {}) // throws fetch_refused
 */
export function checkAddress(address: string, policy: AddressPolicy): PinnedAddress {
  const literal = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address
  if (literal.includes('%') || !ipaddr.isValid(literal)) {
    throw new SignatureError('fetch_refused', `"${literal}" is not a plain IP address`)
  }
  const parsed = ipaddr.parse(literal)
  const mapped = parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
  const effective = mapped ? (parsed as ipaddr.IPv6).toIPv4Address() : parsed
  const normalized = effective.toString()
  if (METADATA.has(normalized)) {
    throw new SignatureError('fetch_refused', `address ${normalized} is a cloud metadata endpoint`)
  }
  const range = effective.range()
  if (range === 'unicast') return { address: normalized, family: effective.kind() === 'ipv4' ? 4 : 6 }
  const allowed =
    !mapped &&
    ((range === 'loopback' && policy.allowLoopback === true) ||
      (PRIVATE_RANGES.has(range) && policy.allowPrivate === true))
  if (!allowed) {
    throw new SignatureError(
      'fetch_refused',
      `address ${literal} is not publicly routable (${mapped ? 'IPv4-mapped ' : ''}${range})`,
    )
  }
  return { address: normalized, family: effective.kind() === 'ipv4' ? 4 : 6 }
}
