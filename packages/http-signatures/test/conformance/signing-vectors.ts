/**
 * Loading and staging of the AdCP RFC 9421 conformance vectors (test-vectors/{webhook,request}-signing): which
 * files exist, the JWKS a vector exposes, and the verifier state its `test_harness_state` asks for.
 */
import { listConformanceFiles, readConformanceJson } from '@adwire/conformance'
import { expect } from 'vitest'
import {
  MemoryReplayStore,
  staticRevocation,
  type AdcpJwk,
  type Jwks,
  type RevocationSource,
} from '../../src/index.js'

export interface SigningVector {
  name: string
  reference_now: number
  signing_profile_version?: '3.1' | '3.2'
  request: { method: string; url: string; headers: Record<string, string>; body: string }
  jwks_ref?: string[]
  jwks_override?: Record<string, AdcpJwk> | { keys: AdcpJwk[] }
  verifier_capability?: {
    supported: boolean
    covers_content_digest?: 'required' | 'forbidden' | 'either'
    required_for?: string[]
    protocol_methods_required_for?: string[]
  }
  expected_signature_base?: string
  expected_outcome: { success: true } | { success: false; error_code: string; failed_step: number | string }
  test_harness_state?: {
    $comment?: string
    replay_cache_entries?: Array<{ keyid: string; nonce: string; ttl_seconds?: number }>
    revoked_kids?: string[]
    per_keyid_cap_filled_for?: string
    replay_cache_per_keyid_cap_hit?: { keyid: string }
    revocation_list_stale_seconds?: number
    revocation_list?: { updated: string; next_update: string; revoked_kids: string[] }
  }
}

export const VERSIONS = ['3.1.19', '3.2.0-beta.5'] as const

/** The vector files of a folder, relative to it (`positive/001-basic-post.json`), positives first. */
export function vectorFiles(version: string, folder: 'webhook-signing' | 'request-signing'): string[] {
  const files = listConformanceFiles(`compliance/${version}/test-vectors/${folder}`, (file) =>
    /(^|\/)(positive|negative)\/[^/]+\.json$/.test(file),
  )
  const rank = (file: string) => (file.includes('positive/') ? 0 : 1)
  return files.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
}

export function readVector(version: string, folder: string, file: string): SigningVector {
  return readConformanceJson(`compliance/${version}/test-vectors/${folder}/${file}`) as SigningVector
}

/** keys.json of a folder, each key with its `_private_d_for_test_only` as `d`. */
export function privateKeys(version: string, folder: string): Map<string, AdcpJwk> {
  const file = readConformanceJson(`compliance/${version}/test-vectors/${folder}/keys.json`) as {
    keys: Array<Record<string, unknown>>
  }
  const keys = new Map<string, AdcpJwk>()
  for (const { _private_d_for_test_only: d, $comment: _comment, ...jwk } of file.keys) {
    keys.set(jwk['kid'] as string, { ...(jwk as unknown as AdcpJwk), d: d as string, key_ops: ['sign'] })
  }
  return keys
}

/** The public JWKS a vector exposes: keys.json filtered to `jwks_ref`, then `jwks_override` applied. */
export function vectorJwks(version: string, folder: string, vector: SigningVector): Jwks {
  const file = readConformanceJson(`compliance/${version}/test-vectors/${folder}/keys.json`) as {
    keys: Array<Record<string, unknown>>
  }
  const all = file.keys.map(
    ({ _private_d_for_test_only: _d, $comment: _comment, ...jwk }) => jwk as unknown as AdcpJwk,
  )
  const override = vector.jwks_override
  if (override && Array.isArray((override as { keys?: unknown }).keys)) {
    return {
      keys: (override as { keys: AdcpJwk[] }).keys.map(({ $comment: _comment, ...jwk }) => jwk as AdcpJwk),
    }
  }
  let keys = vector.jwks_ref ? all.filter((jwk) => vector.jwks_ref!.includes(jwk.kid)) : all
  if (override) {
    const replacements = override as Record<string, AdcpJwk>
    keys = keys.filter((jwk) => !(jwk.kid in replacements)).concat(Object.values(replacements))
  }
  return { keys }
}

/** The verifier state a vector's `test_harness_state` describes, on fresh stores. */
export async function vectorState(
  vector: SigningVector,
  capForFill: number,
): Promise<{ replayStore: MemoryReplayStore; revocation?: RevocationSource; maxNoncesPerKey?: number }> {
  const state = vector.test_harness_state ?? {}
  const handled = new Set([
    '$comment',
    'replay_cache_entries',
    'revoked_kids',
    'per_keyid_cap_filled_for',
    'replay_cache_per_keyid_cap_hit',
    'revocation_list_stale_seconds',
    'revocation_list',
  ])
  expect(
    Object.keys(state).filter((key) => !handled.has(key)),
    'unknown test_harness_state members',
  ).toEqual([])
  const now = vector.reference_now
  const replayStore = new MemoryReplayStore()
  for (const entry of state.replay_cache_entries ?? []) {
    expect(
      await replayStore.remember(entry.keyid, entry.nonce, now + (entry.ttl_seconds ?? 360), Infinity, now),
    ).toBe('stored')
  }
  let maxNoncesPerKey: number | undefined
  const capped = state.per_keyid_cap_filled_for ?? state.replay_cache_per_keyid_cap_hit?.keyid
  if (capped !== undefined) {
    maxNoncesPerKey = capForFill
    replayStore.fill(capped, capForFill, now + 360)
  }
  let revocation: RevocationSource | undefined
  if (state.revoked_kids) revocation = staticRevocation(state.revoked_kids)
  if (state.revocation_list_stale_seconds !== undefined) revocation = staticRevocation([], { stale: true })
  if (state.revocation_list) {
    const list = state.revocation_list
    const updated = Date.parse(list.updated) / 1000
    const nextUpdate = Date.parse(list.next_update) / 1000
    // Stale once next_update plus a grace of four polling intervals has passed (security.mdx transport revocation).
    revocation = staticRevocation(list.revoked_kids, { stale: now > nextUpdate + 4 * (nextUpdate - updated) })
  }
  return {
    replayStore,
    ...(revocation ? { revocation } : {}),
    ...(maxNoncesPerKey ? { maxNoncesPerKey } : {}),
  }
}

/** Runs a promise expected to reject and returns the rejection. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection, got success')
}
