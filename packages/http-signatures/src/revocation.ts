import type { RevocationSource, RevocationStatus } from './types.js'

/** Options of {@link staticRevocation}. */
export interface StaticRevocationOptions {
  /**
   * Report every keyid `stale` (the list was not refreshed within `next_update` + grace), so verifiers reject
   * new signatures with `*_signature_revocation_stale`: fail closed.
   */
  readonly stale?: boolean
}

/**
 * A {@link RevocationSource} over a fixed list of revoked keyids (AdCP transport revocation, `revoked_kids`:
 * every signature under such a keyid is rejected, whenever made). For tests, for a pre-revoked conformance key,
 * or for a list a caller refreshes itself by building a new source; a revoked keyid stays `revoked` even when
 * the list is stale.
 *
 * @example
 * await verifyWebhook(message, { keys, revocation: staticRevocation(['test-revoked-webhook-2026']) })
 */
export function staticRevocation(
  revokedKids: Iterable<string>,
  options: StaticRevocationOptions = {},
): RevocationSource {
  const revoked = new Set(revokedKids)
  const stale = options.stale === true
  return {
    async check(keyid: string): Promise<RevocationStatus> {
      if (revoked.has(keyid)) return 'revoked'
      return stale ? 'stale' : 'valid'
    },
  }
}
