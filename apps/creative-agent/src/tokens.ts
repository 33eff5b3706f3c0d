/**
 * Bearer tokens for the protected task (build_creative needs `creatives:write`). From TOKENS when set;
 * otherwise one token is generated at the first start, printed once by the server, and only its SHA-256 is
 * kept in the database (every instance on the database accepts it). Tokens are only ever held hashed.
 */
import { createHash, randomBytes } from 'node:crypto'
import { hashedTokenLookup, type Principal, type TokenLookup } from '@adwire/agent-server'
import type { TokenGrant } from './env.js'
import type { Storage } from './storage.js'

const SETTING = 'default_token_sha256'

/** The principal of the generated token. */
export const DEFAULT_PRINCIPAL: Principal = {
  principal_id: 'default-buyer',
  permissions: { creatives: ['read', 'write'] },
}

export interface ResolvedTokens {
  readonly lookup: TokenLookup
  /** Where the tokens came from. */
  readonly source: 'env' | 'database' | 'generated'
  /** The token, when this start generated it (print it once); undefined otherwise. */
  readonly generated?: string
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

/**
 * @example
 * const { lookup, generated } = await resolveTokens(storage, env.tokens)
 * if (generated) console.log(`TOKEN=${generated}`)
 */
export async function resolveTokens(
  storage: Storage,
  grants: readonly TokenGrant[],
): Promise<ResolvedTokens> {
  if (grants.length > 0) {
    const digests = new Map(grants.map((grant) => [sha256(grant.token), grant.principal]))
    return { lookup: hashedTokenLookup(digests), source: 'env' }
  }
  const lookupOf = (digest: string) => hashedTokenLookup(new Map([[digest, DEFAULT_PRINCIPAL]]))
  const stored = await storage.getSetting(SETTING)
  if (stored) return { lookup: lookupOf(stored), source: 'database' }
  const token = `cat_${randomBytes(32).toString('base64url')}`
  const digest = sha256(token)
  const winner = await storage.putSettingIfAbsent(SETTING, digest)
  if (winner !== digest) return { lookup: lookupOf(winner), source: 'database' }
  return { lookup: lookupOf(digest), source: 'generated', generated: token }
}
