/**
 * The first half of every outbound fetch: the URL is checked, the host name is resolved once, every answer must
 * pass the address policy, and the connection is pinned to the first answer. Nothing resolves the name again,
 * so a DNS answer that changes between the check and the connection (rebinding) cannot move it.
 */
import { lookup as dnsLookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { SignatureError } from '../errors.js'
import { checkAddress, type AddressPolicy, type PinnedAddress } from './address-policy.js'

/** One answer of a DNS lookup, as `node:dns` gives it with `{ all: true }`. */
export interface LookupAddress {
  readonly address: string
  readonly family: number
}

/** How targets are checked and resolved. */
export interface TargetPolicy extends AddressPolicy {
  /** Allow `http:` URLs (tests, local development). Default `false`: https only. */
  readonly allowHttp?: boolean
  /** Resolves a host name to every address it has. Default: `node:dns` `lookup` with `{ all: true }`. */
  readonly lookup?: (hostname: string) => Promise<readonly LookupAddress[]>
}

/** A checked target: the URL, the address the connection goes to and the TLS server name. */
export interface PinnedTarget {
  readonly url: URL
  readonly pinned: PinnedAddress
  /** The host name for SNI and certificate checks; undefined for an IP literal. */
  readonly servername: string | undefined
}

const defaultLookup = (hostname: string) => dnsLookup(hostname, { all: true, verbatim: true })

/**
 * Checks `input` (absolute, http(s) as allowed, no userinfo), resolves its host once before `deadline` and
 * checks every answer ({@link checkAddress}: one bad answer refuses the target).
 *
 * @throws {SignatureError} `fetch_refused` (scheme, userinfo, address) or `fetch_failed` (lookup)
 * @example
 * const { pinned } = await pinTarget('https://seller.example/jwks.json', {}, Date.now() + 5_000)
 */
export async function pinTarget(
  input: string,
  policy: TargetPolicy,
  deadline: number,
): Promise<PinnedTarget> {
  const url = parseTarget(input, policy.allowHttp === true)
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  if (isIP(host) !== 0) return { url, pinned: checkAddress(host, policy), servername: undefined }
  const answers = await withDeadline(
    (policy.lookup ?? defaultLookup)(host),
    deadline,
    `DNS lookup of ${host}`,
  )
  if (answers.length === 0) throw new SignatureError('fetch_failed', `${host} has no address`)
  const checked = answers.map((answer) => checkAddress(answer.address, policy))
  return { url, pinned: checked[0]!, servername: host }
}

function parseTarget(input: string, allowHttp: boolean): URL {
  let url: URL
  try {
    url = new URL(input)
  } catch {
    throw new SignatureError('fetch_refused', 'not an absolute URL')
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) {
    throw new SignatureError('fetch_refused', `scheme ${url.protocol} refused: https only`)
  }
  if (url.username !== '' || url.password !== '') {
    throw new SignatureError('fetch_refused', 'URLs with userinfo are refused')
  }
  return url
}

async function withDeadline<T>(promise: Promise<T>, deadline: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new SignatureError('fetch_failed', `${what} timed out`)),
      Math.max(0, deadline - Date.now()),
    )
  })
  try {
    return await Promise.race([promise, expired])
  } catch (error) {
    if (SignatureError.is(error)) throw error
    throw new SignatureError('fetch_failed', `${what} failed`, undefined, { cause: error })
  } finally {
    clearTimeout(timer)
  }
}
