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
  MemoryReplayStore,
  findDuplicateKeys,
  signWebhook,
  verifyWebhook,
  type AdcpJwk,
  type SignedMessage,
} from '../src/index.js'
import { readSignatureInput, readSignatureValue } from '../src/signature-input.js'

const NOW = 1776520800
const ROUNDS = 7
const CHUNK = 2000
const privateJwk: AdcpJwk = {
  kid: 'bench-ed25519',
  kty: 'OKP',
  crv: 'Ed25519',
  alg: 'EdDSA',
  use: 'sig',
  adcp_use: 'request-signing',
  x: 'y7tTfeqazsFeTn3ccCzQlcJ4qFWuYsu-JkJAcfc9VoA',
  d: 'V0Z2ktvVfcWISjh4xmUlt-bSOJML9QBlzWzDkMFvgJw',
}
const { d: _d, ...publicJwk } = privateJwk
const jwks = { keys: [{ ...publicJwk, key_ops: ['verify'] }] }

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

// Every verification needs a fresh nonce, as on the wire: one signed message per verification of the run.
const messages: SignedMessage[] = []
for (let index = 0; index < CHUNK * ROUNDS * 4; index += 1) {
  messages.push(
    await signWebhook(
      { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
      { key: privateJwk, now: NOW },
    ),
  )
}
const first = messages[0]!
const base = Buffer.from(
  `"@method": POST\n"@target-uri": ${url}\n"@authority": buyer.example.com\n"content-type": application/json\n` +
    `"content-digest": ${first.headers['content-digest']}\n"@signature-params": ${first.headers['signature-input']!.slice(5)}`,
)
const signature = Buffer.from(first.headers['signature']!.slice(6, -1), 'base64url')
const keyObject = createPublicKey({ key: publicJwk as Record<string, string>, format: 'jwk' })
if (!nodeVerify(null, base, keyObject, signature)) throw new Error('bench fixture does not verify')
await verifyWebhook(first, { keys: jwks, now: NOW })

let cursor = 0
/** Operations a second, `concurrency` in flight, over the next CHUNK messages. */
async function rate(
  operation: (message: SignedMessage) => unknown,
  concurrency: number,
  consumes = true,
): Promise<number> {
  const start = cursor
  if (consumes) cursor += CHUNK
  let next = 0
  const began = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < CHUNK) await operation(messages[start + next++]!)
    }),
  )
  return CHUNK / ((performance.now() - began) / 1000)
}

const bareSync = () => nodeVerify(null, base, keyObject, signature)
const bareAsync = () =>
  new Promise<boolean>((resolve) =>
    nodeVerify(null, base, keyObject, signature, (_error, valid) => resolve(valid)),
  )

console.log(
  `verifyWebhook against node:crypto Ed25519 verify (sync for 1 in flight, thread pool for 64); body ${body.length} bytes`,
)
console.log(
  'median of',
  ROUNDS,
  'alternating rounds; ratio = verifyWebhook throughput / node:crypto throughput\n',
)
for (const concurrency of [1, 64]) {
  for (const checkBody of [true, false]) {
    const ratios: number[] = []
    let baselineRate = 0
    for (let round = 0; round < ROUNDS; round += 1) {
      baselineRate = await rate(concurrency === 1 ? bareSync : bareAsync, concurrency, false)
      const replayStore = new MemoryReplayStore()
      const candidate = await rate(
        (message) => verifyWebhook(message, { keys: jwks, now: NOW, replayStore, checkBody }),
        concurrency,
      )
      ratios.push(candidate / baselineRate)
    }
    ratios.sort((a, b) => a - b)
    const label = `${concurrency} in flight, ${checkBody ? 'all 14 steps' : 'checkBody: false'}`
    console.log(
      `${label.padEnd(36)} ratio ${ratios[ROUNDS >> 1]!.toFixed(2)}   (node:crypto ≈ ${baselineRate.toFixed(0)}/s)`,
    )
  }
}

console.log('\nmain-thread cost of the parts (mitata, mean):')
const headers = first.headers
const target = canonicalTarget(url)
const digest = readSha256Digest(headers['content-digest']!)!
const parts: Record<string, () => unknown> = {
  'node:crypto verify (sync)': bareSync,
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
