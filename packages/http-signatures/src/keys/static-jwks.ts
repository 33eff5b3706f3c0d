import type { Jwks, KeyResolver } from '../types.js'
import { indexJwks } from './json-document.js'

/** Options of {@link jwksResolver}. */
export interface JwksResolverOptions {
  /** The signer the keys speak for (the `agents[].url` they were published under), reported with each key. */
  readonly signer?: string
}

/**
 * A {@link KeyResolver} over a fixed JWKS: configuration, tests, conformance vectors, the CLI. The set is
 * validated once (an array of objects, each kid at most once; entries without a kid are skipped) and never
 * changes; an unknown keyid resolves to `undefined` (`*_key_unknown` at checklist step 7).
 *
 * @throws {SignatureError} `key_source_invalid` when the JWKS is malformed
 * @example
 * const keys = jwksResolver({ keys: [publicJwk] }, { signer: 'https://seller.example/mcp' })
 * await keys.resolve('seller-2026-01', { profile: 'webhook', now: 1_776_520_800 }) // { jwk, signer }
 */
export function jwksResolver(jwks: Jwks, options: JwksResolverOptions = {}): KeyResolver {
  const index = indexJwks(jwks)
  const signer = options.signer
  return {
    resolve: async (keyid) => {
      const jwk = index.get(keyid)
      if (jwk === undefined) return undefined
      return signer === undefined ? { jwk } : { jwk, signer }
    },
  }
}
