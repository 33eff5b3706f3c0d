/**
 * checkAddress over every entry of the IANA IPv4 and IPv6 Special-Purpose Address Registries (plus multicast,
 * the deprecated site-local and IPv4-compatible forms): none is reachable by default; under the most permissive
 * policy only loopback and the private ranges are, and never through an IPv4-mapped or IPv4-compatible form.
 */
import { describe, expect, it } from 'vitest'
import { SignatureError } from '../errors.js'
import { checkAddress } from './address-policy.js'

type Verdict = 'refused' | 'loopback' | 'private'

/** [range, an address inside it, what the permissive policy does with it]. */
const IPV4: readonly (readonly [string, string, Verdict])[] = [
  ['0.0.0.0/8 this network', '0.1.2.3', 'refused'],
  ['0.0.0.0/32 this host', '0.0.0.0', 'refused'],
  ['10.0.0.0/8 private-use', '10.20.30.40', 'private'],
  ['100.64.0.0/10 shared address space', '100.64.0.1', 'private'],
  ['127.0.0.0/8 loopback', '127.0.0.1', 'loopback'],
  ['127.0.0.0/8 loopback, not .1', '127.255.0.9', 'loopback'],
  ['169.254.0.0/16 link local', '169.254.10.10', 'refused'],
  ['172.16.0.0/12 private-use', '172.31.255.254', 'private'],
  ['192.0.0.0/24 IETF protocol assignments', '192.0.0.1', 'refused'],
  ['192.0.0.0/29 IPv4 service continuity prefix', '192.0.0.6', 'refused'],
  ['192.0.0.8/32 IPv4 dummy address', '192.0.0.8', 'refused'],
  ['192.0.0.9/32 port control protocol anycast', '192.0.0.9', 'refused'],
  ['192.0.0.10/32 TURN anycast', '192.0.0.10', 'refused'],
  ['192.0.0.170/32 NAT64/DNS64 discovery', '192.0.0.170', 'refused'],
  ['192.0.0.171/32 NAT64/DNS64 discovery', '192.0.0.171', 'refused'],
  ['192.0.2.0/24 documentation (TEST-NET-1)', '192.0.2.1', 'refused'],
  ['192.31.196.0/24 AS112-v4', '192.31.196.1', 'refused'],
  ['192.52.193.0/24 AMT', '192.52.193.1', 'refused'],
  ['192.88.99.0/24 deprecated 6to4 relay anycast', '192.88.99.1', 'refused'],
  ['192.168.0.0/16 private-use', '192.168.1.1', 'private'],
  ['192.175.48.0/24 direct delegation AS112 service', '192.175.48.1', 'refused'],
  ['198.18.0.0/15 benchmarking', '198.19.255.254', 'refused'],
  ['198.51.100.0/24 documentation (TEST-NET-2)', '198.51.100.7', 'refused'],
  ['203.0.113.0/24 documentation (TEST-NET-3)', '203.0.113.7', 'refused'],
  ['240.0.0.0/4 reserved', '240.0.0.1', 'refused'],
  ['255.255.255.255/32 limited broadcast', '255.255.255.255', 'refused'],
  ['224.0.0.0/4 multicast', '224.0.0.251', 'refused'],
  ['169.254.169.254 cloud metadata', '169.254.169.254', 'refused'],
  ['100.100.100.200 Alibaba metadata (in 100.64/10)', '100.100.100.200', 'refused'],
]

const IPV6: readonly (readonly [string, string, Verdict])[] = [
  ['::1/128 loopback', '::1', 'loopback'],
  ['::/128 unspecified', '::', 'refused'],
  ['::ffff:0:0/96 IPv4-mapped (loopback)', '::ffff:127.0.0.1', 'refused'],
  ['::ffff:0:0/96 IPv4-mapped (private)', '::ffff:10.0.0.1', 'refused'],
  ['::ffff:0:0/96 IPv4-mapped, hex form', '::ffff:7f00:1', 'refused'],
  ['::/96 IPv4-compatible (loopback)', '::127.0.0.1', 'refused'],
  ['::/96 IPv4-compatible, hex form', '::7f00:1', 'refused'],
  ['::/96 IPv4-compatible (private)', '::10.0.0.1', 'refused'],
  ['::/96 IPv4-compatible (metadata)', '::169.254.169.254', 'refused'],
  ['::/96 IPv4-compatible (this network)', '::2', 'refused'],
  ['64:ff9b::/96 IPv4/IPv6 translation', '64:ff9b::7f00:1', 'refused'],
  ['64:ff9b:1::/48 local-use IPv4/IPv6 translation', '64:ff9b:1::1', 'refused'],
  ['100::/64 discard-only', '100::1', 'refused'],
  ['100:0:0:1::/64 dummy IPv6 prefix', '100:0:0:1::1', 'refused'],
  ['2001::/23 IETF protocol assignments', '2001:5::1', 'refused'],
  ['2001::/32 TEREDO', '2001:0:4136:e378::1', 'refused'],
  ['2001:1::1/128 port control protocol anycast', '2001:1::1', 'refused'],
  ['2001:1::2/128 TURN anycast', '2001:1::2', 'refused'],
  ['2001:1::3/128 DNS-SD service registration protocol anycast', '2001:1::3', 'refused'],
  ['2001:2::/48 benchmarking', '2001:2::1', 'refused'],
  ['2001:3::/32 AMT', '2001:3::1', 'refused'],
  ['2001:4:112::/48 AS112-v6', '2001:4:112::1', 'refused'],
  ['2001:10::/28 deprecated ORCHID', '2001:10::1', 'refused'],
  ['2001:20::/28 ORCHIDv2', '2001:20::1', 'refused'],
  ['2001:30::/28 drone remote ID protocol entity tags', '2001:30::1', 'refused'],
  ['2001:db8::/32 documentation', '2001:db8::1', 'refused'],
  ['2002::/16 6to4', '2002:7f00:1::1', 'refused'],
  ['2620:4f:8000::/48 direct delegation AS112 service', '2620:4f:8000::1', 'refused'],
  ['3fff::/20 documentation', '3fff::1', 'refused'],
  ['5f00::/16 segment routing SIDs', '5f00::1', 'refused'],
  ['fc00::/7 unique-local', 'fd12:3456::1', 'private'],
  ['fe80::/10 link-local unicast', 'fe80::1', 'refused'],
  ['fec0::/10 deprecated site-local', 'fec0::1', 'refused'],
  ['ff00::/8 multicast', 'ff02::1', 'refused'],
  ['fd00:ec2::254 AWS IPv6 metadata (in fc00::/7)', 'fd00:ec2::254', 'refused'],
]

const PERMISSIVE = { allowLoopback: true, allowPrivate: true }

const verdict = (address: string, policy: typeof PERMISSIVE | object): 'allowed' | 'refused' => {
  try {
    checkAddress(address, policy)
    return 'allowed'
  } catch (error) {
    if (SignatureError.is(error) && error.code === 'fetch_refused') return 'refused'
    throw error
  }
}

describe.each([
  ['IPv4', IPV4],
  ['IPv6', IPV6],
])('checkAddress over the IANA %s special-purpose registry', (_family, table) => {
  it.each(table)('%s (%s)', (_range, address, permissive) => {
    expect(verdict(address, {})).toBe('refused')
    expect(verdict(`[${address}]`, {})).toBe('refused')
    expect(verdict(address, { allowLoopback: true })).toBe(permissive === 'loopback' ? 'allowed' : 'refused')
    expect(verdict(address, { allowPrivate: true })).toBe(permissive === 'private' ? 'allowed' : 'refused')
    expect(verdict(address, PERMISSIVE)).toBe(permissive === 'refused' ? 'refused' : 'allowed')
  })
})

describe('checkAddress on public addresses', () => {
  it('allows global unicast and pins IPv4-mapped and -compatible forms to their IPv4 address', () => {
    expect(checkAddress('1.1.1.1', {})).toEqual({ address: '1.1.1.1', family: 4 })
    expect(checkAddress('2606:4700::1111', {})).toEqual({ address: '2606:4700::1111', family: 6 })
    expect(checkAddress('2001:200::1', {})).toEqual({ address: '2001:200::1', family: 6 })
    expect(checkAddress('::ffff:1.1.1.1', {})).toEqual({ address: '1.1.1.1', family: 4 })
    expect(checkAddress('::1.1.1.1', {})).toEqual({ address: '1.1.1.1', family: 4 })
  })

  it('names the embedded form when it refuses one', () => {
    expect(() => checkAddress('::127.0.0.1', PERMISSIVE)).toThrow(/IPv4-compatible loopback/)
    expect(() => checkAddress('::ffff:127.0.0.1', PERMISSIVE)).toThrow(/IPv4-mapped loopback/)
  })
})
