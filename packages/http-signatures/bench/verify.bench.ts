/**
 * Verify throughput of verifyWebhook against bare node:crypto Ed25519 verification of the same signature base,
 * measured in the same run (architecture.md: benches report ratios against primitives, never absolute targets;
 * the goal is ≥ 0.85). Rounds alternate baseline and candidate and the median ratio is reported, because the
 * development machines are shared. Then the main-thread cost of each checklist part, with mitata.
 *
 *   pnpm --filter @adwire/http-signatures bench            (node --import tsx bench/verify.bench.ts)
 */
import { createPublicKey, verify as nodeVerify } from 'node:crypto'
import { measure } from 'mitata'
import { canonicalTarget } from '../src/canonicalize.js'
import { readSha256Digest, digestMatches } from '../src/content-digest.js'
import {
  buildSignatureBase,
  generateSigningKey,
  MemoryReplayStore,
  signWebhook,
  verifyWebhook,
  type AdcpJwk,
  type SignedMessage,
} from '../src/index.js'
import { findDuplicateKeys } from '../src/internal.js'
import { readSignatureInput, readSignatureValue } from '../src/signature-input.js'

const NOW = 1776520800
const ROUNDS = 7
const CHUNK = 1500

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
const url = 'https://buyer.example.com/adcp/webhook/create_media_buy/agent_123/op_abc'

interface Fixture {
  readonly name: string
  readonly jwks: { keys: AdcpJwk[] }
  /** One signed message per verification of the run: every verification needs a fresh nonce, as on the wire. */
  readonly messages: SignedMessage[]
  readonly bareSync: () => boolean
  readonly bareAsync: () => Promise<boolean>
}

async function fixture(alg: 'ed25519' | 'es256'): Promise<Fixture> {
  const { privateJwk, publicJwk } = await generateSigningKey({ alg, kid: `bench-${alg}` })
  const messages: SignedMessage[] = []
  for (let index = 0; index < CHUNK * ROUNDS * 2; index += 1) {
    messages.push(
      await signWebhook(
        { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
        { key: privateJwk, now: NOW },
      ),
    )
  }
  const first = messages[0]!
  const base = Buffer.from(buildSignatureBase(first))
  const signature = Buffer.from(first.headers['signature']!.slice(6, -1), 'base64url')
  const { kid: _kid, alg: _alg, use: _use, key_ops: _ops, adcp_use: _purpose, ...jwk } = publicJwk
  const key = createPublicKey({ key: jwk as Record<string, string>, format: 'jwk' })
  const algorithm = alg === 'ed25519' ? null : 'sha256'
  const keyInput = alg === 'ed25519' ? key : { key, dsaEncoding: 'ieee-p1363' as const }
  const bareSync = () => nodeVerify(algorithm, base, keyInput, signature)
  if (!bareSync()) throw new Error(`${alg} bench fixture does not verify`)
  const bareAsync = () =>
    new Promise<boolean>((resolve) =>
      nodeVerify(algorithm, base, keyInput, signature, (_error, valid) => resolve(valid)),
    )
  const jwks = { keys: [publicJwk] }
  await verifyWebhook(first, { keys: jwks, now: NOW })
  return { name: alg === 'ed25519' ? 'Ed25519' : 'ES256', jwks, messages, bareSync, bareAsync }
}

/** Operations a second, `concurrency` in flight, over CHUNK messages starting at `start`. */
async function rate(
  messages: SignedMessage[],
  start: number,
  operation: (message: SignedMessage) => unknown,
  concurrency: number,
) {
  let next = 0
  const began = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < CHUNK) await operation(messages[start + next++]!)
    }),
  )
  return CHUNK / ((performance.now() - began) / 1000)
}

console.log(
  `verifyWebhook against bare node:crypto verify of the same signature base; body ${body.length} bytes`,
)
console.log(
  `median of ${ROUNDS} alternating rounds; ratio = verifyWebhook throughput / node:crypto throughput`,
)
console.log(
  '(1 in flight: node:crypto sync verify; 64 in flight: node:crypto callback verify on the thread pool)\n',
)
for (const alg of ['ed25519', 'es256'] as const) {
  const { name, jwks, messages, bareSync, bareAsync } = await fixture(alg)
  let cursor = 0
  for (const concurrency of [1, 64]) {
    for (const checkBody of [true, false]) {
      const ratios: number[] = []
      let candidateRate = 0
      for (let round = 0; round < ROUNDS; round += 1) {
        const baselineRate = await rate(messages, 0, concurrency === 1 ? bareSync : bareAsync, concurrency)
        const replayStore = new MemoryReplayStore()
        const start = cursor
        cursor = (cursor + CHUNK) % (messages.length - CHUNK)
        candidateRate = await rate(
          messages,
          start,
          (message) => verifyWebhook(message, { keys: jwks, now: NOW, replayStore, checkBody }),
          concurrency,
        )
        ratios.push(candidateRate / baselineRate)
      }
      ratios.sort((a, b) => a - b)
      const label = `${name}, ${concurrency} in flight, ${checkBody ? 'all 14 steps' : 'checkBody: false'}`
      console.log(
        `${label.padEnd(44)} ratio ${ratios[ROUNDS >> 1]!.toFixed(2)}   (≈ ${candidateRate.toFixed(0)} verified/s)`,
      )
    }
  }
}

const { messages, bareSync } = await fixture('ed25519')
const first = messages[0]!
console.log('\nmain-thread cost of the parts (mitata, mean):')
const headers = first.headers
const target = canonicalTarget(url)
const digest = readSha256Digest(headers['content-digest']!)!
const parts: Record<string, () => unknown> = {
  'node:crypto Ed25519 verify (sync)': bareSync,
  'parse Signature-Input': () => readSignatureInput(headers['signature-input']!),
  'decode Signature': () => readSignatureValue(headers['signature']!, 'base64url'),
  'parse Content-Digest': () => readSha256Digest(headers['content-digest']!),
  'canonicalise target (cached)': () => canonicalTarget(url),
  'SHA-256 of the body': () => digestMatches(digest, body),
  'step 14 duplicate-key scan': () => findDuplicateKeys(body),
  'JSON.parse (for scale)': () => JSON.parse(body),
}
if (typeof target === 'string') throw new Error(target)
for (const [name, operation] of Object.entries(parts)) {
  const stats = await measure(operation)
  console.log(`${name.padEnd(36)} ${(stats.avg / 1000).toFixed(2).padStart(8)} µs`)
}
