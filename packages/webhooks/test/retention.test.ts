/**
 * Dedup retention on an injected clock (AdCP: at least max(24 h, delivery_retry_horizon_seconds), measured
 * from first acceptance): a retry inside it is a duplicate; after it and a sweep, a redelivery is new.
 * Every delivery is signed at the moment it is sent, as a seller's retry is.
 */
import { describe, expect, it } from 'vitest'
import type { Registration } from '../src/index.js'
import { answer, envelope, NOW, receiverWith, SELLER, sellerKey, signed } from '../src/testing/receiver.js'

const key = sellerKey()
const HOUR = 3_600
const registration = (retryHorizonSeconds?: number): Registration => ({
  id: 'sig',
  auth: { mode: 'rfc9421', keys: key.jwks },
  sender: SELLER,
  shape: 'mcp',
  ...(retryHorizonSeconds !== undefined ? { retryHorizonSeconds } : {}),
})

/** Delivers `payload` at `at` (seconds after NOW) and returns the answer's status word. */
async function at(setup: ReturnType<typeof receiverWith>, seconds: number, payload: unknown) {
  setup.clock.now = NOW + seconds
  const response = await answer(await setup.receiver.handle(await signed(key, 'sig', payload, NOW + seconds)))
  return response.body.status ?? response.body.error?.code
}

describe('receiver: dedup retention', () => {
  it('keeps a key 24 h by default: a duplicate just under, accepted anew after the sweep', async () => {
    const setup = receiverWith([registration()])
    const payload = envelope()
    expect(await at(setup, 0, payload)).toBe('accepted')
    expect(await at(setup, 23 * HOUR, payload)).toBe('duplicate')
    // The retry at 23 h did not extend the retention: it runs from first acceptance.
    expect(await at(setup, 24 * HOUR - 60, payload)).toBe('duplicate')
    expect(await setup.claims.sweep(NOW + 24 * HOUR + 1)).toBeGreaterThanOrEqual(1)
    expect(await at(setup, 24 * HOUR + 1, payload)).toBe('accepted')
    expect(setup.published).toHaveLength(2)
  })

  it('keeps a key for the advertised 48 h retry horizon: still a duplicate at 47 h', async () => {
    const setup = receiverWith([registration(48 * HOUR)])
    const payload = envelope()
    expect(await at(setup, 0, payload)).toBe('accepted')
    expect(await at(setup, 25 * HOUR, payload)).toBe('duplicate')
    expect(await at(setup, 47 * HOUR, payload)).toBe('duplicate')
    // A sweep inside the horizon removes nothing of it.
    expect(await setup.claims.sweep(NOW + 47 * HOUR + 30 * 60)).toBe(0)
    expect(await at(setup, 48 * HOUR - 1, payload)).toBe('duplicate')
    expect(await setup.claims.sweep(NOW + 48 * HOUR + 1)).toBeGreaterThanOrEqual(1)
    expect(await at(setup, 48 * HOUR + 1, payload)).toBe('accepted')
    expect(setup.published).toHaveLength(2)
  })

  it('never keeps less than 24 h, whatever a shorter configured retention or horizon says', async () => {
    const setup = receiverWith([registration(HOUR)], { limits: { retentionSeconds: HOUR } })
    const payload = envelope()
    expect(await at(setup, 0, payload)).toBe('accepted')
    expect(await setup.claims.sweep(NOW + 2 * HOUR)).toBe(0)
    expect(await at(setup, 23 * HOUR, payload)).toBe('duplicate')
  })

  it('keeps the terminal outcome of a task as long: a re-emission under a new key at 47 h is a duplicate', async () => {
    const setup = receiverWith([registration(48 * HOUR)])
    const done = envelope({ status: 'completed', result: { media_buy_id: 'mb_1', packages: [] } })
    expect(await at(setup, 0, done)).toBe('accepted')
    const reemitted = { ...done, idempotency_key: `whk_${crypto.randomUUID()}` }
    expect(await at(setup, 47 * HOUR, reemitted)).toBe('duplicate')
    expect(await setup.convergence.sweep(NOW + 47 * HOUR)).toBe(0)
    expect(await setup.convergence.sweep(NOW + 48 * HOUR + 1)).toBe(1)
    expect(setup.published).toHaveLength(1)
  })
})
