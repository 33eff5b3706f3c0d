/**
 * The official compliance test-kit credentials (compliance/3.1.19/test-kits/*.yaml `auth.api_key`): a kit's
 * handle is its key without the rotating suffix (`demo-acme-outdoor-v1` → `demo-acme-outdoor-`), and any Bearer
 * with that prefix authenticates, as the kits ask. Each key is its own principal (the kit's id and a digest of
 * the key): two holders of kit keys never share buys. A `-live-` handle resolves to a live (non-sandbox)
 * principal, which the comply_test_controller refuses with FORBIDDEN.
 */
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { testKitsDir } from '@adwire/adcp-data'
import type { Principal } from '@adwire/agent-server'
import { RESOURCES } from '../settings.js'

/** A test-kit handle and the principal its keys derive theirs from (see {@link testKitFor}). */
export interface TestKitCredential {
  readonly prefix: string
  readonly principal: Principal
  readonly live: boolean
}

const FULL: Principal['permissions'] = Object.fromEntries(
  RESOURCES.map((resource) => [resource, ['read', 'write', 'delete', 'approve']]),
)

/** The principal id of a test-kit handle (`test-kit:acme-outdoor`, `test-kit:acme-outdoor-live`). */
export const testKitPrincipalId = (prefix: string) => `test-kit:${prefix.replace(/^demo-|-$/g, '')}`

/** The kits' handles, read from the official 3.1.19 test kits (the files of @adwire/adcp-data). */
export function loadTestKitCredentials(): TestKitCredential[] {
  const found = new Map<string, TestKitCredential>()
  for (const file of readdirSync(testKitsDir).filter((name) => name.endsWith('.yaml'))) {
    const text = readFileSync(path.join(testKitsDir, file), 'utf8')
    for (const match of text.matchAll(/^\s+api_key:\s*"(demo-[a-z0-9-]+?-)v\d+"\s*$/gm)) {
      const prefix = match[1]!
      found.set(prefix, {
        prefix,
        live: prefix.endsWith('-live-'),
        principal: { principal_id: testKitPrincipalId(prefix), permissions: FULL },
      })
    }
  }
  // Longest first: `demo-acme-outdoor-live-` must win over `demo-acme-outdoor-`.
  return [...found.values()].sort((a, b) => b.prefix.length - a.prefix.length)
}

/** The kit credential a token belongs to, or undefined. */
export function testKitFor(
  credentials: readonly TestKitCredential[],
  token: string,
): TestKitCredential | undefined {
  return credentials.find(
    (credential) => token.startsWith(credential.prefix) && token.length > credential.prefix.length,
  )
}

/**
 * The principal one kit key authenticates as: `test-kit:<kit>:<digest of the key>`, so each key is its own
 * buyer; undefined when the token is no kit key.
 */
export function testKitPrincipal(
  credentials: readonly TestKitCredential[],
  token: string,
): Principal | undefined {
  const credential = testKitFor(credentials, token)
  if (!credential) return undefined
  const digest = createHash('sha256').update(token).digest('hex').slice(0, 24)
  return { ...credential.principal, principal_id: `${credential.principal.principal_id}:${digest}` }
}

/** Whether `principalId` was authenticated by one of `credential`'s keys. */
export const isKitKeyPrincipal = (credential: TestKitCredential, principalId: string) =>
  principalId.startsWith(`${credential.principal.principal_id}:`)
