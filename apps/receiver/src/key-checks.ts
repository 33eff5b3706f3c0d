/**
 * The two per-registration key checks on top of a registration's key source: a publisher's adagents.json
 * `signing_keys[]` pins (AdCP security.mdx: the pin is authoritative) and the seller's key revocation list
 * (checklist step 9, failing closed when the list is stale).
 */
import {
  SignatureError,
  type KeyResolver,
  type RevocationSource,
  type RevocationStatus,
} from '@adwire/http-signatures'

/**
 * Where a publisher's adagents.json lives: `https://<domain>/.well-known/adagents.json`, or under the stored
 * origin URL (development).
 *
 * @example
 * adagentsUrlOf('publisher.example') // 'https://publisher.example/.well-known/adagents.json'
 */
export function adagentsUrlOf(publisherDomain: string): string {
  const origin = publisherDomain.includes('://') ? publisherDomain : `https://${publisherDomain}`
  return `${origin}/.well-known/adagents.json`
}

/**
 * A {@link KeyResolver} that consults `revocation` for every webhook key it resolves: a revoked keyid fails
 * with `webhook_signature_key_revoked`, a stale list (never read, or not refreshed by `next_update` + grace)
 * or one that cannot be consulted with `webhook_signature_revocation_stale` (fail closed), both at step 9.
 * The receiver core takes one revocation source for all registrations; this gives each registration its own
 * seller's list. Unlike the verifier's own step 9 it runs right after the key lookup (step 7), before the key's
 * purpose is checked, so a revoked key with a wrong purpose reports the revocation.
 *
 * @example
 * const keys = withRevocation(brandJsonResolver({ agentUrl }), revocationList({ url: revocationUrl }))
 */
export function withRevocation(keys: KeyResolver, revocation: RevocationSource): KeyResolver {
  return {
    async resolve(keyid, context) {
      const resolved = await keys.resolve(keyid, context)
      if (resolved === undefined || context.profile !== 'webhook') return resolved
      let status: RevocationStatus
      try {
        status = await revocation.check(keyid, context.now)
      } catch (error) {
        throw new SignatureError(
          'webhook_signature_revocation_stale',
          'the revocation list could not be consulted',
          9,
          { cause: error },
        )
      }
      if (status === 'revoked') {
        throw new SignatureError('webhook_signature_key_revoked', `keyid "${keyid}" is revoked`, 9)
      }
      if (status === 'stale') {
        throw new SignatureError('webhook_signature_revocation_stale', 'the revocation list is stale', 9)
      }
      return resolved
    },
  }
}
