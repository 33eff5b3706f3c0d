/**
 * Registration checks (property-list registrations are RFC 9421 only) and the 3.1 duplicate rule (every
 * duplicate 2xx, the first copy wins, also while that first copy is still being published).
 */
import { describe, expect, it } from 'vitest'
import { registrationProblem, type Registration } from '../src/index.js'
import {
  answer,
  envelope,
  HMAC_SECRET,
  hmacSigned,
  receiverWith,
  SELLER,
  sellerKey,
  signed,
} from '../src/testing/receiver.js'

const key = sellerKey()

const propertyListEvent = () => ({
  idempotency_key: `whk_${crypto.randomUUID()}`,
  event: 'property_list_changed',
  list_id: 'pl_1',
  resolved_at: '2026-04-18T10:00:00Z',
  signature: 'rfc9421',
})

describe('receiver: property-list registrations are RFC 9421 only', () => {
  it('refuses a delivery to a property-list registration in HMAC or Bearer mode, publishing nothing', async () => {
    const { receiver, published, logs } = receiverWith([
      { id: 'hmac-plist', auth: { mode: 'hmac', secret: HMAC_SECRET }, shape: 'property-list' },
      { id: 'bearer-plist', auth: { mode: 'bearer', token: HMAC_SECRET }, shape: 'property-list' },
    ])
    const refused = await answer(await receiver.handle(await hmacSigned('hmac-plist', propertyListEvent())))
    expect(refused).toEqual({
      status: 401,
      body: {
        error: {
          code: 'webhook_registration_invalid',
          message: 'property-list registrations authenticate with RFC 9421 only, not hmac',
        },
      },
    })
    const bearer = new Request('https://buyer.example.com/webhooks/bearer-plist', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${HMAC_SECRET}` },
      body: JSON.stringify(propertyListEvent()),
    })
    expect((await answer(await receiver.handle(bearer))).body.error?.code).toBe(
      'webhook_registration_invalid',
    )
    expect(published).toEqual([])
    expect(logs.map((entry) => [entry.registrationId, entry.outcome])).toEqual([
      ['hmac-plist', 'rejected'],
      ['bearer-plist', 'rejected'],
    ])
  })

  it('accepts the same event on an RFC 9421 property-list registration', async () => {
    const { receiver, published } = receiverWith([
      { id: 'plist', auth: { mode: 'rfc9421', keys: key.jwks }, shape: 'property-list' },
    ])
    expect((await receiver.handle(await signed(key, 'plist', propertyListEvent()))).status).toBe(200)
    expect(published).toHaveLength(1)
  })

  it('names the problem of a registration, or none', () => {
    const hmac: Registration = { id: 'r', auth: { mode: 'hmac', secret: HMAC_SECRET } }
    expect(registrationProblem(hmac)).toBeUndefined()
    expect(registrationProblem({ ...hmac, shape: 'collection-list' })).toBeUndefined()
    expect(registrationProblem({ ...hmac, shape: 'property-list' })).toMatch(/RFC 9421 only/)
    expect(registrationProblem({ ...hmac, sender: '' })).toMatch(/empty sender/)
    expect(registrationProblem({ id: 'r', auth: { mode: 'basic' } } as unknown as Registration)).toMatch(
      /auth mode/,
    )
  })
})

describe('receiver: 3.1 duplicates', () => {
  it('answers an identical delivery still being published with 200 duplicate in 3.1 mode (503 in 3.2)', async () => {
    for (const protocol of ['3.1', '3.2'] as const) {
      let release!: () => void
      const gate = new Promise<void>((resolve) => (release = resolve))
      let calls = 0
      const { receiver, logs } = receiverWith(
        [{ id: 'sig', auth: { mode: 'rfc9421', keys: key.jwks }, sender: SELLER, shape: 'mcp' }],
        {
          protocol,
          publish: async () => {
            calls += 1
            await gate
          },
        },
      )
      const payload = envelope()
      const first = receiver.handle(await signed(key, 'sig', payload))
      await new Promise((resolve) => setTimeout(resolve, 20))
      const second = await answer(await receiver.handle(await signed(key, 'sig', payload)))
      if (protocol === '3.1') {
        expect(second).toEqual({ status: 200, body: { status: 'duplicate' } })
        expect(logs.at(-1)).toMatchObject({ outcome: 'duplicate', status: 200 })
      } else {
        expect(second).toMatchObject({ status: 503, body: { error: { code: 'delivery_in_flight' } } })
      }
      release()
      expect(await answer(await first)).toEqual({ status: 200, body: { status: 'accepted' } })
      expect(calls).toBe(1)
    }
  })
})
