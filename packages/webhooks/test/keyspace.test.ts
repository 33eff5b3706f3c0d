/**
 * Whose keyspace a delivery is deduplicated in: the configured seller (`sender`) whatever the auth mode, else
 * the signer a key resolver names, else the registration alone.
 */
import type { KeyResolver } from '@adwire/http-signatures'
import { describe, expect, it } from 'vitest'
import type { Registration } from '../src/index.js'
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

/** A key resolver that knows the signer, as brand.json discovery does. */
const namingResolver = (signer: string): KeyResolver => ({
  async resolve(keyid) {
    const jwk = key.jwks.keys.find((candidate) => candidate.kid === keyid)
    return jwk ? { jwk, signer } : undefined
  },
})

describe('receiver: the HMAC to RFC 9421 migration shares one keyspace', () => {
  const registrations = (sender?: string): Registration[] => [
    { id: 'old', auth: { mode: 'hmac', secret: HMAC_SECRET }, shape: 'mcp', ...(sender ? { sender } : {}) },
    { id: 'new', auth: { mode: 'rfc9421', keys: key.jwks }, shape: 'mcp', ...(sender ? { sender } : {}) },
  ]

  it('answers an RFC 9421 delivery of a key first delivered with HMAC as a duplicate when both name the seller', async () => {
    const { receiver, published } = receiverWith(registrations(SELLER))
    const payload = envelope()
    expect(await answer(await receiver.handle(await hmacSigned('old', payload)))).toEqual({
      status: 200,
      body: { status: 'accepted' },
    })
    expect(await answer(await receiver.handle(await signed(key, 'new', payload)))).toEqual({
      status: 200,
      body: { status: 'duplicate' },
    })
    expect(published.map((event) => [event.registrationId, event.sender])).toEqual([['old', SELLER]])
  })

  it('keeps the two registrations apart without a configured sender (each its own keyspace)', async () => {
    const { receiver, published } = receiverWith(registrations())
    const payload = envelope()
    await receiver.handle(await hmacSigned('old', payload))
    expect((await answer(await receiver.handle(await signed(key, 'new', payload)))).body.status).toBe(
      'accepted',
    )
    expect(published.map((event) => event.sender)).toEqual(['hmac:old', 'rfc9421:new'])
  })

  it('lets the configured sender win over the signer a resolver names, and uses the signer otherwise', async () => {
    const { receiver, published } = receiverWith([
      { id: 'named', auth: { mode: 'rfc9421', keys: namingResolver('https://agent-a.example') } },
      {
        id: 'pinned',
        auth: { mode: 'rfc9421', keys: namingResolver('https://agent-b.example') },
        sender: SELLER,
      },
    ])
    await receiver.handle(await signed(key, 'named', envelope()))
    await receiver.handle(await signed(key, 'pinned', envelope()))
    expect(published.map((event) => event.sender)).toEqual(['rfc9421:https://agent-a.example', SELLER])
  })
})

describe('receiver: several URLs of one seller', () => {
  it('deduplicates across registrations that name the same sender, and not across sellers', async () => {
    const { receiver, published } = receiverWith([
      { id: 'a', auth: { mode: 'rfc9421', keys: key.jwks }, sender: SELLER },
      { id: 'b', auth: { mode: 'rfc9421', keys: key.jwks }, sender: SELLER },
      { id: 'c', auth: { mode: 'rfc9421', keys: key.jwks }, sender: 'https://other-seller.example' },
    ])
    const payload = envelope()
    expect((await answer(await receiver.handle(await signed(key, 'a', payload)))).body.status).toBe(
      'accepted',
    )
    expect((await answer(await receiver.handle(await signed(key, 'b', payload)))).body.status).toBe(
      'duplicate',
    )
    expect((await answer(await receiver.handle(await signed(key, 'c', payload)))).body.status).toBe(
      'accepted',
    )
    expect(published.map((event) => event.registrationId)).toEqual(['a', 'c'])
  })
})
