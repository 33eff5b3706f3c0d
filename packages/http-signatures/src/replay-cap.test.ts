import { describe, expect, it } from 'vitest'
import { SignatureError } from './errors.js'
import { generateSigningKey } from './keygen.js'
import { DEFAULT_WEBHOOK_NONCE_RATE, NONCE_HORIZON_SECONDS, nonceCapForRate } from './replay-cap.js'
import { MemoryReplayStore } from './replay-memory.js'
import type { HttpMessage } from './types.js'
import { signWebhook, verifyWebhook } from './webhook.js'

const message: HttpMessage = {
  method: 'POST',
  url: 'https://buyer.example.com/adcp/webhook/create_media_buy/agent_123/op_abc',
  headers: { 'Content-Type': 'application/json' },
  body: '{"idempotency_key":"whk_01HW9D3H8FZP2N6R8T0V4X6Z9B","task_id":"task_456","status":"working"}',
}
const START = 1_776_520_800

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    if (SignatureError.is(error)) return error.code
    throw error
  }
  return 'resolved'
}

describe('nonceCapForRate', () => {
  it('is the rate times the longest a nonce of an accepted signature lives (60 s + 300 s + 60 s)', () => {
    expect(NONCE_HORIZON_SECONDS).toBe(420)
    expect(DEFAULT_WEBHOOK_NONCE_RATE).toBe(5_000)
    expect(nonceCapForRate(5_000)).toBe(2_100_000)
    expect(nonceCapForRate(0.5)).toBe(210)
    expect(nonceCapForRate(1 / 3)).toBe(140)
  })

  it('refuses a rate that is not a positive finite number with a RangeError coded ERR_OUT_OF_RANGE', () => {
    for (const rate of [0, -1, Number.NaN, Infinity, 1e300, '5' as unknown as number]) {
      expect(() => nonceCapForRate(rate)).toThrow(RangeError)
      expect(() => nonceCapForRate(rate)).toThrow(expect.objectContaining({ code: 'ERR_OUT_OF_RANGE' }))
    }
  })
})

describe('the webhook replay cap is a rate', () => {
  it(
    'sustains one key at 5,000 webhooks a second for longer than a nonce lives, then refuses it above that rate',
    { timeout: 120_000 },
    async () => {
      const { privateJwk: key, jwks } = await generateSigningKey({ alg: 'ed25519', kid: 'busy-seller' })
      const replayStore = new MemoryReplayStore()
      const cap = nonceCapForRate(DEFAULT_WEBHOOK_NONCE_RATE)
      const seconds = NONCE_HORIZON_SECONDS + 20
      let refused = 0
      let maxLive = 0
      for (let second = 0; second < seconds; second += 1) {
        const now = START + second
        // The sender's clock runs 60 s ahead (the most step 5 accepts) and it signs for 300 s: each nonce is
        // kept until created + 300 + 60 = now + 420, the longest any accepted nonce lives.
        const created = now + 60
        // One delivery a second through the whole checklist with the default options (no cap given) ...
        const signed = await signWebhook(message, { key, now: created })
        await verifyWebhook(signed, { keys: jwks, now, replayStore })
        // ... and the other 4,999 straight into the store, as step 13 stores them.
        for (let index = 1; index < DEFAULT_WEBHOOK_NONCE_RATE; index += 1) {
          const outcome = await replayStore.remember(
            'busy-seller',
            `${second}-${index}`,
            created + 360,
            cap,
            now,
          )
          if (outcome !== 'stored') refused += 1
        }
        maxLive = Math.max(maxLive, replayStore.liveCount('busy-seller', now))
      }
      expect(refused).toBe(0)
      // Steady state: a full horizon of nonces held, never more than rate × 420.
      expect(maxLive).toBe(cap)

      // One delivery more within the last second is above 5,000 a second: refused as rate abuse (step 9a).
      const now = START + seconds - 1
      const extra = await signWebhook(message, { key, now: now + 60 })
      expect(await codeOf(verifyWebhook(extra, { keys: jwks, now, replayStore }))).toBe(
        'webhook_signature_rate_abuse',
      )
      // A second later the oldest second of nonces has expired and the key is accepted again.
      const later = await signWebhook(message, { key, now: now + 61 })
      await expect(verifyWebhook(later, { keys: jwks, now: now + 1, replayStore })).resolves.toMatchObject({
        keyid: 'busy-seller',
      })
      expect(replayStore.liveCount('busy-seller', now + 1)).toBeLessThanOrEqual(cap)
    },
  )

  it('takes maxNonceRatePerKey as the cap, an explicit maxNoncesPerKey winning over it', async () => {
    const { privateJwk: key, jwks } = await generateSigningKey({ alg: 'ed25519', kid: 'k' })
    const signed = await signWebhook(message, { key, now: START })
    const filled = (count: number) => {
      const store = new MemoryReplayStore()
      store.fill('k', count, START + 360)
      return store
    }
    // The former default count (100,000) no longer refuses a key.
    await expect(
      verifyWebhook(signed, { keys: jwks, now: START, replayStore: filled(100_000) }),
    ).resolves.toBeDefined()
    // 2 a second: 840 live nonces.
    expect(
      await codeOf(
        verifyWebhook(signed, { keys: jwks, now: START, replayStore: filled(840), maxNonceRatePerKey: 2 }),
      ),
    ).toBe('webhook_signature_rate_abuse')
    await expect(
      verifyWebhook(signed, { keys: jwks, now: START, replayStore: filled(839), maxNonceRatePerKey: 2 }),
    ).resolves.toBeDefined()
    expect(
      await codeOf(
        verifyWebhook(signed, {
          keys: jwks,
          now: START,
          replayStore: filled(10),
          maxNonceRatePerKey: 2,
          maxNoncesPerKey: 10,
        }),
      ),
    ).toBe('webhook_signature_rate_abuse')
    await expect(
      verifyWebhook(signed, { keys: jwks, now: START, replayStore: filled(10), maxNonceRatePerKey: 0 }),
    ).rejects.toThrow(RangeError)
  })
})

describe('MemoryReplayStore maxNonceRatePerKey', () => {
  it('bounds a keyid by its own rate whatever cap the verifier passes', async () => {
    const store = new MemoryReplayStore({ maxNonceRatePerKey: 0.01 })
    // 0.01 a second: ceil(4.2) = 5 live nonces at most.
    for (let index = 0; index < 5; index += 1) {
      expect(await store.remember('k', `n${index}`, 1_420, Infinity, 1_000)).toBe('stored')
    }
    expect(await store.atCapacity('k', Infinity, 1_000)).toBe(true)
    expect(await store.remember('k', 'n5', 1_420, Infinity, 1_000)).toBe('capacity')
    expect(await store.remember('k', 'n5', 1_420, 3, 1_000)).toBe('capacity')
    expect(await store.atCapacity('k', Infinity, 1_420)).toBe(false)
    expect(await store.remember('k', 'n5', 1_840, Infinity, 1_420)).toBe('stored')
    expect(() => new MemoryReplayStore({ maxNonceRatePerKey: -1 })).toThrow(RangeError)
  })
})
