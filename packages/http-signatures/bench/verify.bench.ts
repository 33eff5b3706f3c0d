/**
 * Verify throughput of verifyWebhook and verifyRequest (3.2) against bare node:crypto verification of the same
 * signature base with an already imported KeyObject, measured in the same run (architecture.md: benches report
 * ratios against primitives, never absolute targets; the goal is ≥ 0.9). Rounds alternate baseline and
 * candidate and the median and best ratios are reported, because the development machines are shared; beside
 * the wall-clock ratio, the 1-in-flight rows give the ratio of process CPU time, which other processes on the
 * machine disturb less. Then the main-thread cost of each checklist part, with mitata.
 *
 * Like with like: both sides run in the same loop (each operation awaited), the baseline with the KeyObject
 * built once as verifiers cache it and passed as it is, and for ES256 the signature converted to DER once:
 * node:crypto's fastest call (on Node.js 24, `{ key, dsaEncoding: 'ieee-p1363' }` costs about 50 µs more a
 * check, see src/ecdsa-der.ts; the candidate converts each signature itself); the candidate verifies a fresh
 * message each time (every verification needs a fresh nonce, as on the wire) with the body as received bytes,
 * and keeps every check: parsing, parameters, tag, algorithm, window, components, key lookup in a JWKS and its
 * purpose, the base, the signature, Content-Digest, replay insert and, unless `checkBody: false`, the step-14
 * duplicate-key scan.
 *
 *   pnpm --filter @adwire/http-signatures bench            (node --import tsx bench/verify.bench.ts)
 */
import { createPublicKey, verify as nodeVerify } from 'node:crypto'
import { measure } from 'mitata'
import { canonicalTarget } from '../src/canonicalize.js'
import { readSha256Digest, digestMatchesNow } from '../src/content-digest.js'
import { p1363ToDer } from '../src/ecdsa-der.js'
import {
  buildSignatureBase,
  generateSigningKey,
  MemoryReplayStore,
  signRequest,
  signWebhook,
  verifyRequest,
  verifyWebhook,
  type AdcpJwk,
  type SignedMessage,
} from '../src/index.js'
import { findDuplicateKeys } from '../src/internal.js'
import { normalizeHeaders } from '../src/headers.js'
import { isPlainJsonBytes } from '../src/json-bytes.js'
import { keyPurposeProblem, resolveKeyNow } from '../src/key-lookup.js'
import { composeSignatureBase } from '../src/signature-base.js'
import { readSignatureInput, readSignatureValue } from '../src/signature-input.js'

const NOW = 1776520800
const ROUNDS = 21
const CHUNK = 250

// A delivery-report sized body (about 2 KB), as receivers see them.
const body = JSON.stringify({
  idempotency_key: 'whk_01HW9D3H8FZP2N6R8T0V4X6Z9B',
  task_id: 'task_456',
  operation_id: 'op_abc',
  task_type: 'create_media_buy',
  status: 'completed',
  timestamp: '2026-04-18T14:00:00Z',
  result: {
    media_buy_id: 'mb_001',
    packages: Array.from({ length: 14 }, (_, index) => ({
      package_id: `pkg_${index}`,
      budget: { amount: 1000 + index, currency: 'USD' },
      status: 'active',
      targeting: { geo_countries: ['US', 'CA'] },
    })),
  },
})
const bodyBytes = new TextEncoder().encode(body)
const urls = {
  webhook: 'https://buyer.example.com/adcp/webhook/create_media_buy/agent_123/op_abc',
  request: 'https://seller.example.com/adcp/create_media_buy',
}
type Profile = keyof typeof urls

interface Fixture {
  readonly name: string
  readonly jwks: { keys: AdcpJwk[] }
  /** One signed message per verification of a round (each with its own nonce), body as received bytes. */
  readonly messages: SignedMessage[]
  readonly bareSync: () => boolean
  readonly bareAsync: () => Promise<boolean>
}

async function fixture(alg: 'ed25519' | 'es256', profile: Profile): Promise<Fixture> {
  const { privateJwk, publicJwk } = await generateSigningKey({
    alg,
    kid: `bench-${alg}`,
    ...(profile === 'request' ? { adcpUse: 'request-signing' as const } : {}),
  })
  const message = {
    method: 'POST',
    url: urls[profile],
    headers: { 'content-type': 'application/json' },
    body,
  }
  const messages: SignedMessage[] = []
  // Each round gets a fresh replay store, so one chunk of messages serves every round.
  for (let index = 0; index < CHUNK; index += 1) {
    const signed =
      profile === 'webhook'
        ? await signWebhook(message, { key: privateJwk, now: NOW })
        : await signRequest(message, { key: privateJwk, now: NOW, profile: '3.2' })
    messages.push({ ...signed, body: bodyBytes })
  }
  const first = messages[0]!
  const base = Buffer.from(buildSignatureBase(first, { profile }))
  const signature = Buffer.from(
    first.headers['signature']!.slice(6, -1),
    profile === 'webhook' ? 'base64url' : 'base64',
  )
  const { kid: _kid, alg: _alg, use: _use, key_ops: _ops, adcp_use: _purpose, ...jwk } = publicJwk
  const key = createPublicKey({ key: jwk as Record<string, string>, format: 'jwk' })
  const algorithm = alg === 'ed25519' ? null : 'sha256'
  const bytes = alg === 'ed25519' ? signature : p1363ToDer(signature)
  const bareSync = () => nodeVerify(algorithm, base, key, bytes)
  if (!bareSync()) throw new Error(`${alg} bench fixture does not verify`)
  const bareAsync = () =>
    new Promise<boolean>((resolve) =>
      nodeVerify(algorithm, base, key, bytes, (_error, valid) => resolve(valid)),
    )
  const jwks = { keys: [publicJwk] }
  await candidate(profile, jwks, undefined, true)(first)
  return { name: alg === 'ed25519' ? 'Ed25519' : 'ES256', jwks, messages, bareSync, bareAsync }
}

function candidate(
  profile: Profile,
  jwks: { keys: AdcpJwk[] },
  replayStore: MemoryReplayStore | undefined,
  checkBody: boolean,
): (message: SignedMessage) => Promise<unknown> {
  const options = { keys: jwks, now: NOW, replayStore, checkBody }
  return profile === 'webhook'
    ? (message) => verifyWebhook(message, options)
    : (message) => verifyRequest(message, { ...options, profile: '3.2' })
}

/** Operations a second (wall clock) and CPU microseconds an operation, `concurrency` in flight, CHUNK messages. */
async function rate(
  messages: SignedMessage[],
  operation: (message: SignedMessage) => unknown,
  concurrency: number,
) {
  let next = 0
  const cpu = process.cpuUsage()
  const began = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < CHUNK) await operation(messages[next++]!)
    }),
  )
  const elapsed = performance.now() - began
  const used = process.cpuUsage(cpu)
  return { perSecond: CHUNK / (elapsed / 1000), cpuPerOp: (used.user + used.system) / CHUNK }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!
const best = (values: number[]) => Math.max(...values)

console.log(
  `verifyWebhook / verifyRequest (3.2) against bare node:crypto verify of the same signature base; body ${body.length} bytes`,
)
console.log(
  `${ROUNDS} alternating rounds of ${CHUNK}; ratio = our throughput / node:crypto throughput (median, best);`,
)
console.log('cpu = node:crypto CPU time / ours (median), 1 in flight only')
console.log(
  '(1 in flight: node:crypto sync verify; 64 in flight: node:crypto callback verify on the thread pool)\n',
)
const cases = [
  { concurrency: 1, checkBody: false },
  { concurrency: 1, checkBody: true },
  { concurrency: 64, checkBody: false },
]
let webhookEd25519: Fixture | undefined
for (const profile of ['webhook', 'request'] as const) {
  for (const alg of ['ed25519', 'es256'] as const) {
    const current = await fixture(alg, profile)
    if (profile === 'webhook' && alg === 'ed25519') webhookEd25519 = current
    const { name, jwks, messages, bareSync, bareAsync } = current
    for (const { concurrency, checkBody } of cases) {
      const ratios: number[] = []
      const cpuRatios: number[] = []
      let candidateRate = 0
      for (let round = 0; round < ROUNDS; round += 1) {
        const baseline = await rate(messages, concurrency === 1 ? bareSync : bareAsync, concurrency)
        const ours = await rate(
          messages,
          candidate(profile, jwks, new MemoryReplayStore(), checkBody),
          concurrency,
        )
        candidateRate = ours.perSecond
        ratios.push(ours.perSecond / baseline.perSecond)
        cpuRatios.push(baseline.cpuPerOp / ours.cpuPerOp)
      }
      const label = `${profile} ${name}, ${concurrency} in flight, ${checkBody ? 'all 14 steps' : 'checkBody: false'}`
      const cpu = concurrency === 1 ? `   cpu ${median(cpuRatios).toFixed(2)}` : ''
      console.log(
        `${label.padEnd(48)} ratio ${median(ratios).toFixed(2)} (best ${best(ratios).toFixed(2)})${cpu}   (≈ ${candidateRate.toFixed(0)} verified/s)`,
      )
    }
  }
}

const { messages, bareSync } = webhookEd25519!
const first = messages[0]!
console.log('\nmain-thread cost of the parts (mitata, mean):')
const headers = first.headers
const target = canonicalTarget(urls.webhook)
const digest = readSha256Digest(headers['content-digest']!)!
if (typeof target === 'string') throw new Error(target)
const fields = normalizeHeaders(headers)
const input = readSignatureInput(headers['signature-input']!)
if (typeof input === 'string') throw new Error(input)
const { jwks } = webhookEd25519!
let replayStore = new MemoryReplayStore()
let nonceCount = 0
const decoder = new TextDecoder('utf-8', { fatal: true })
const encoder = new TextEncoder()
const scratch = new Uint8Array(8192)
const parts: Record<string, () => unknown> = {
  'node:crypto Ed25519 verify (sync)': bareSync,
  'read the headers': () => normalizeHeaders(headers),
  'parse Signature-Input': () => readSignatureInput(headers['signature-input']!),
  'decode Signature': () => readSignatureValue(headers['signature']!, 'base64url'),
  'parse Content-Digest': () => readSha256Digest(headers['content-digest']!),
  'key by kid and its purpose': () =>
    keyPurposeProblem(resolveKeyNow(jwks, input.params.keyid!, 'webhook')!.jwk, 'ed25519', 'webhook'),
  'canonicalise target (cached)': () => canonicalTarget(urls.webhook),
  'signature base, UTF-8': () =>
    encoder.encodeInto(composeSignatureBase({ method: 'POST', target, fields, ...input })!, scratch),
  'SHA-256 of the body': () => digestMatchesNow(digest, bodyBytes),
  'replay insert (memory, new nonce)': () => {
    if ((nonceCount & 4095) === 0) replayStore = new MemoryReplayStore()
    return replayStore.remember('bench', `n${nonceCount++}`, NOW + 360, Infinity, NOW)
  },
  'step 14 on the received bytes': () => isPlainJsonBytes(bodyBytes),
  'step 14 full: decode + key scan': () => findDuplicateKeys(decoder.decode(bodyBytes)),
  'JSON.parse (for scale)': () => JSON.parse(body),
}
for (const [name, operation] of Object.entries(parts)) {
  const stats = await measure(operation)
  console.log(`${name.padEnd(36)} ${(stats.avg / 1000).toFixed(2).padStart(8)} µs`)
}
