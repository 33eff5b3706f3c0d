/**
 * Bearer tokens: from TOKENS when set, otherwise one generated at the first start, printed once by the server
 * and kept only as its SHA-256 in the database (every instance on the database accepts it); plus the official
 * test-kit keys when TEST_KIT_CREDENTIALS=1 (each key its own principal). Tokens are only ever held hashed.
 */
import { createHash, randomBytes } from 'node:crypto'
import { hashedTokenLookup, type Principal, type TokenLookup } from '@adwire/agent-server'
import type { TokenGrant } from '../env.js'
import { type Storage, testKitPrincipal, type TestKitCredential } from '@adwire/seller'

const SETTING = 'default_token_sha256'

/** The principal of the generated token: every permission on every area. */
export const DEFAULT_PRINCIPAL: Principal = {
  principal_id: 'default-buyer',
  permissions: {
    products: ['read', 'write', 'delete', 'approve'],
    media_buys: ['read', 'write', 'delete', 'approve'],
    creatives: ['read', 'write', 'delete', 'approve'],
    reports: ['read', 'write', 'delete', 'approve'],
  },
}

export interface ResolvedTokens {
  readonly lookup: TokenLookup
  readonly source: 'env' | 'database' | 'generated'
  /** The token, when this start generated it (print it once); undefined otherwise. */
  readonly generated?: string
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

function withTestKits(lookup: TokenLookup, kits: readonly TestKitCredential[]): TokenLookup {
  if (kits.length === 0) return lookup
  return async (token) => (await lookup(token)) ?? testKitPrincipal(kits, token)
}

/**
 * @example
 * const { lookup, generated } = await resolveTokens(storage, env.tokens, loadTestKitCredentials())
 */
export async function resolveTokens(
  storage: Storage,
  grants: readonly TokenGrant[],
  kits: readonly TestKitCredential[] = [],
): Promise<ResolvedTokens> {
  if (grants.length > 0) {
    const digests = new Map(grants.map((grant) => [sha256(grant.token), grant.principal]))
    return { lookup: withTestKits(hashedTokenLookup(digests), kits), source: 'env' }
  }
  const lookupOf = (digest: string) =>
    withTestKits(hashedTokenLookup(new Map([[digest, DEFAULT_PRINCIPAL]])), kits)
  const stored = await storage.getSetting(SETTING)
  if (stored) return { lookup: lookupOf(stored), source: 'database' }
  const token = `sat_${randomBytes(32).toString('base64url')}`
  const digest = sha256(token)
  const winner = await storage.putSettingIfAbsent(SETTING, digest)
  if (winner !== digest) return { lookup: lookupOf(winner), source: 'database' }
  return { lookup: lookupOf(digest), source: 'generated', generated: token }
}
