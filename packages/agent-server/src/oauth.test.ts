/* eslint-disable @typescript-eslint/no-explicit-any -- loose JSON access in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryOAuthClientStore } from './oauth.js'
import { startAgent, type RunningAgent } from './testing/support.js'

let agent: RunningAgent
const store = new MemoryOAuthClientStore()

beforeAll(async () => {
  agent = await startAgent({ oauth: { store } })
})
afterAll(() => agent.close())

const register = (body: unknown) =>
  fetch(`${agent.origin}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

describe('OAuth dynamic client registration', () => {
  it('registers a client and stores only the secret hash', async () => {
    const response = await register({
      client_name: 'Buyer agent',
      redirect_uris: ['https://buyer.example/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      scope: 'adcp:products adcp:media_buys adcp:creatives',
    })
    expect(response.status).toBe(201)
    const client = (await response.json()) as Record<string, any>
    expect(client).toMatchObject({
      client_name: 'Buyer agent',
      redirect_uris: ['https://buyer.example/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      scope: 'adcp:products adcp:media_buys adcp:creatives',
      client_id: expect.any(String),
      client_secret: expect.any(String),
    })
    const stored = await store.get(client.client_id)
    expect(JSON.stringify(stored)).not.toContain(client.client_secret)
  })

  it.each([
    ['no redirect_uris', { client_name: 'x' }, 'invalid_redirect_uri'],
    ['an http redirect off loopback', { redirect_uris: ['http://buyer.example/cb'] }, 'invalid_redirect_uri'],
    [
      'an unsupported grant',
      { redirect_uris: ['https://b.example/cb'], grant_types: ['client_credentials'] },
      'invalid_client_metadata',
    ],
    [
      'an unknown scope',
      { redirect_uris: ['https://b.example/cb'], scope: 'adcp:everything' },
      'invalid_client_metadata',
    ],
  ])('rejects %s', async (_name, body, error) => {
    const response = await register(body)
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ error })
  })

  it('is not served unless configured', async () => {
    const plain = await startAgent({})
    try {
      expect((await fetch(`${plain.origin}/oauth/register`, { method: 'POST', body: '{}' })).status).toBe(404)
    } finally {
      await plain.close()
    }
  })
})
