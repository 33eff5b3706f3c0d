/**
 * The official compliance test-kit credentials (compliance/3.1.19/test-kits/*.yaml `auth.api_key`): a kit's
 * handle is its key without the rotating suffix (`demo-acme-outdoor-v1` → `demo-acme-outdoor-`), and any Bearer
 * with that prefix authenticates as the kit's principal, as the kits ask. A `-live-` handle resolves to a live
 * (non-sandbox) principal, which the comply_test_controller refuses with FORBIDDEN.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import type { Principal } from '@adwire/agent-server'
import { conformancePath } from '@adwire/conformance'
import { RESOURCES } from '../env.js'

/** A test-kit handle and the principal its keys authenticate as. */
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

/** The kits' handles, read from the vendored 3.1.19 test kits. */
export function loadTestKitCredentials(): TestKitCredential[] {
  const folder = conformancePath('compliance/3.1.19/test-kits')
  const found = new Map<string, TestKitCredential>()
  for (const file of readdirSync(folder).filter((name) => name.endsWith('.yaml'))) {
    const text = readFileSync(path.join(folder, file), 'utf8')
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
