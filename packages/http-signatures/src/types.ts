/** A header collection as callers have it: WHATWG `Headers`, or a plain object (names in any case). */
export type HeaderInput = Headers | Readonly<Record<string, string | readonly string[] | undefined>>

/**
 * An HTTP message as it crossed the wire. `url` is the absolute URL the sender addressed; `body` is the raw
 * bytes (or their UTF-8 string) exactly as sent, never re-serialised.
 */
export interface HttpMessage {
  readonly method: string
  readonly url: string
  readonly headers: HeaderInput
  readonly body?: Uint8Array | string | null
}

/** The RFC 9421 algorithm names AdCP allows. */
export type SignatureAlgorithm = 'ed25519' | 'ecdsa-p256-sha256'

/** A JWK as AdCP publishes it: a public (or, for signing, private) OKP/Ed25519 or EC/P-256 key plus AdCP members. */
export interface AdcpJwk {
  readonly kty: string
  readonly kid: string
  readonly crv?: string
  readonly x?: string
  readonly y?: string
  /** Private part, only in signing keys. */
  readonly d?: string
  readonly alg?: string
  readonly use?: string
  readonly key_ops?: readonly string[]
  /** `request-signing`, deprecated `webhook-signing`, `governance-signing`, ... */
  readonly adcp_use?: string
  /** adagents.json pins: signatures at or after this instant are rejected. */
  readonly revoked_at?: string
  readonly [member: string]: unknown
}

export interface Jwks {
  readonly keys: readonly AdcpJwk[]
}

/** Which profile a key is looked up for. */
export type SignatureProfile = 'webhook' | 'request'

/** A key found for a keyid, and whom it speaks for. */
export interface ResolvedKey {
  readonly jwk: AdcpJwk
  /** The signer identity the key is bound to: the `agents[].url` whose JWKS (or pin) held it, when known. */
  readonly signer?: string
}

/**
 * Finds the key of a keyid. Implementations cache, refetch once on a miss (with a cooldown), and honour pins;
 * `undefined` means the keyid is unknown (`*_key_unknown`). A thrown {@link SignatureError} is passed on.
 */
export interface KeyResolver {
  resolve(keyid: string, context: KeyResolutionContext): Promise<ResolvedKey | undefined>
}

/** What a verifier tells a {@link KeyResolver} about the signature it is checking. */
export interface KeyResolutionContext {
  readonly profile: SignatureProfile
  /** The verifier's clock, Unix seconds. */
  readonly now: number
  /** The signature's `created` parameter (Unix seconds), for pins carrying `revoked_at`. */
  readonly created?: number
}

/** Keys for a verifier: a static JWKS or a resolver. */
export type KeySource = Jwks | KeyResolver

/** What a replay store answers when asked to remember a nonce. */
export type RememberOutcome = 'stored' | 'replayed' | 'capacity'

/**
 * Remembers `(keyid, nonce)` pairs until they expire. `cap` is the most live entries one keyid may hold;
 * reaching it means rate abuse, never silent eviction. Durable implementations live in @adwire/store-sqlite
 * and @adwire/store-postgres; {@link MemoryReplayStore} is for one process.
 */
export interface ReplayStore {
  /** Step 9a: whether the keyid's live entries have reached `cap` (read only, before any crypto). */
  atCapacity(keyid: string, cap: number, now: number): Promise<boolean>
  /** Step 12: whether `(keyid, nonce)` is live. */
  seen(keyid: string, nonce: string, now: number): Promise<boolean>
  /** Step 13: stores `(keyid, nonce)` until `expiresAt` (Unix seconds), atomically with the replay and cap checks. */
  remember(
    keyid: string,
    nonce: string,
    expiresAt: number,
    cap: number,
    now: number,
  ): Promise<RememberOutcome>
}

/** What a revocation source says about a keyid. */
export type RevocationStatus = 'valid' | 'revoked' | 'stale'

/** Step 9: revocation of keyids; `stale` when the list was not refreshed within its grace (fail closed). */
export interface RevocationSource {
  check(keyid: string, now: number): Promise<RevocationStatus>
}
