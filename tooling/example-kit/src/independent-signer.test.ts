import { MemoryReplayStore, SignatureError, verifyWebhook, type Jwks } from '@adwire/http-signatures'
import { expect, it } from 'vitest'
import { independentKey, independentlySigned } from './independent-signer.js'

const url = 'http://127.0.0.1:8080/webhooks/adcp'

it("signs what adwire's verifier accepts, and a changed body fails on the covered digest", async () => {
  const key = independentKey('independent-1')
  const keys = { keys: [key.publicJwk] } as unknown as Jwks
  const body = '{"idempotency_key":"whk_1"}'
  const headers = independentlySigned(key, url, body)
  const verified = await verifyWebhook(
    { method: 'POST', url, headers, body },
    { keys, replayStore: new MemoryReplayStore() },
  )
  expect(verified).toMatchObject({ keyid: 'independent-1', algorithm: 'ed25519' })
  const tampered = verifyWebhook(
    { method: 'POST', url, headers, body: '{"idempotency_key":"whk_2"}' },
    { keys, replayStore: new MemoryReplayStore() },
  )
  await expect(tampered).rejects.toBeInstanceOf(SignatureError)
  await expect(tampered).rejects.toMatchObject({ code: 'webhook_signature_digest_mismatch' })
})
