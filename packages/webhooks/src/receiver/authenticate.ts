import {
  SignatureError,
  verifyBearerWebhook,
  verifyHmacWebhook,
  verifyWebhook,
  type ReplayStore,
  type RevocationSource,
} from '@adwire/http-signatures'
import { findDuplicateKeys } from '@adwire/http-signatures/internal'
import type { InboxNonce } from '../inbox.js'
import { headerValue } from './body.js'
import { Rejection } from './respond.js'
import type { Registration, RegistrationLookup } from './types.js'

export interface AuthenticateContext {
  readonly replayStore: ReplayStore
  readonly revocation?: RevocationSource
  readonly now: number
  readonly maxNoncesPerKey: number
  readonly offload?: 'auto' | 'always' | 'never'
  /**
   * Steps 12–13 left to a transactional inbox: the nonce is handed back (see {@link Authenticated}) instead of
   * being remembered here, and is remembered in the delivery's transaction.
   */
  readonly deferNonce?: boolean
}

/** Who sent the delivery, and the nonce to remember when it was deferred. */
export interface Authenticated {
  /** The verified sender identity (the dedup keyspace). */
  readonly sender: string
  readonly nonce?: InboxNonce
}

/**
 * Verifies a delivery in the one mode its registration chose, and resolves with the verified sender identity
 * (the dedup keyspace): the registration's configured `sender` whatever the mode (so the HMAC and RFC 9421
 * registrations of one seller share a keyspace), else the signer a key resolver names, else the registration.
 * A delivery authenticated another way is `webhook_mode_mismatch`: a receiver never tries RFC 9421 and then
 * HMAC.
 */
export async function authenticate(
  request: RegistrationLookup,
  body: Uint8Array,
  registration: Registration,
  context: AuthenticateContext,
): Promise<Authenticated> {
  const headers = request.headers
  const has = (name: string) => headerValue(headers, name) !== undefined
  const has9421 = has('signature-input') || has('signature')
  // Looked up only where the mode needs it: a name absent from a plain record costs a pass over its names.
  const hasHmac = () => has('x-adcp-signature') || has('x-adcp-timestamp')
  const configured = registration.sender
  const auth = registration.auth
  try {
    if (auth.mode === 'rfc9421') {
      if (!has9421 && hasHmac()) throw mismatch('an HMAC-signed delivery on an RFC 9421 registration')
      let nonce: InboxNonce | undefined
      const store = context.replayStore
      const replayStore: ReplayStore = context.deferNonce
        ? {
            atCapacity: (keyid, cap, now) => store.atCapacity(keyid, cap, now),
            seen: (keyid, value, now) => store.seen(keyid, value, now),
            async remember(keyid, value, expiresAt, cap) {
              nonce = { keyid, nonce: value, expiresAt, cap }
              return 'stored'
            },
          }
        : store
      const verified = await verifyWebhook(
        { method: request.method, url: request.url, headers, body },
        // The verifier reads each option by value: an undefined one is an absent one.
        {
          keys: auth.keys,
          now: context.now,
          replayStore,
          revocation: context.revocation,
          maxNoncesPerKey: context.maxNoncesPerKey,
          offload: context.offload,
        },
      )
      const sender = configured ?? `rfc9421:${verified.signer ?? registration.id}`
      return nonce ? { sender, nonce } : { sender }
    }
    if (has9421)
      throw mismatch(
        `an RFC 9421-signed delivery on a ${auth.mode === 'hmac' ? 'HMAC' : 'Bearer'} registration`,
      )
    if (auth.mode === 'hmac') {
      await verifyHmacWebhook({ headers, body }, { secret: auth.secret, now: context.now })
      return { sender: configured ?? `hmac:${registration.id}` }
    }
    if (hasHmac()) throw mismatch('an HMAC-signed delivery on a Bearer registration')
    await verifyBearerWebhook(headers, auth.token)
    const { duplicates } = findDuplicateKeys(new TextDecoder().decode(body))
    if (duplicates.length > 0)
      throw new SignatureError('webhook_body_malformed', 'body has duplicate object keys', 14)
    return { sender: configured ?? `bearer:${registration.id}` }
  } catch (error) {
    if (error instanceof Rejection) throw error
    if (SignatureError.is(error) && TRANSIENT.has(error.code)) {
      throw new Rejection(
        503,
        'verification_unavailable',
        'the sender keys cannot be fetched now',
        { 'retry-after': '30' },
        'unavailable',
      )
    }
    if (SignatureError.is(error)) {
      // RFC 9421 failures carry the code in WWW-Authenticate (AdCP security.mdx webhook error taxonomy);
      // legacy failures are 401 with the code in the body.
      const header =
        error.code.startsWith('webhook_signature') ||
        error.code === 'webhook_target_uri_malformed' ||
        error.code === 'webhook_body_malformed' ||
        error.code === 'webhook_mode_mismatch'
      throw new Rejection(
        401,
        error.code,
        error.message,
        header ? { 'www-authenticate': error.wwwAuthenticate } : {},
      )
    }
    throw new Rejection(
      503,
      'verification_unavailable',
      'the delivery could not be verified now',
      {},
      'unavailable',
    )
  }
}

/** Key-fetch failures: the sender should retry later rather than give up. */
const TRANSIENT = new Set([
  'key_source_unavailable',
  'fetch_failed',
  'request_signature_jwks_unavailable',
  'request_signature_brand_json_unreachable',
])

/** The 401 of a nonce the inbox found replayed (step 12) or over its keyid's cap (step 13). */
export function nonceRejection(outcome: 'replayed' | 'replay_capacity', keyid: string): Rejection {
  const error =
    outcome === 'replayed'
      ? new SignatureError('webhook_signature_replayed', 'this (keyid, nonce) was already seen', 12)
      : new SignatureError('webhook_signature_rate_abuse', `keyid "${keyid}" is at its replay cap`, 13)
  return new Rejection(401, error.code, error.message, { 'www-authenticate': error.wwwAuthenticate })
}

function mismatch(what: string): SignatureError {
  return new SignatureError(
    'webhook_mode_mismatch',
    `${what}: the registration's authentication mode is fixed`,
  )
}
