/**
 * Artifact pushes (content-standards/artifact-webhook-payload.json) and rights revocation notifications
 * (brand/revocation-notification.json): validated, then deduplicated on (sender, idempotency_key).
 */
import { readConformanceJson } from '@adwire/conformance'
import { describe, expect, it } from 'vitest'
import type { PayloadShape } from '../src/index.js'
import { KEYED_EVENT_MEMBERS } from '../src/receiver/keyed-events.js'
import {
  answer,
  HMAC_SECRET,
  hmacSigned,
  receiverWith,
  SELLER,
  sellerKey,
  signed,
} from '../src/testing/receiver.js'

const key = sellerKey()

const artifactPush = () => ({
  idempotency_key: `whk_${crypto.randomUUID()}`,
  media_buy_id: 'mb_1',
  batch_id: 'batch_1',
  timestamp: '2026-04-18T10:00:00Z',
  artifacts: [
    {
      artifact: { property_rid: 'prop_1', artifact_id: 'art_1', assets: [] },
      delivered_at: '2026-04-18T09:59:00Z',
      impression_id: 'imp_1',
    },
  ],
})
const revocation = () => ({
  idempotency_key: `whk_${crypto.randomUUID()}`,
  rights_id: 'rg_1',
  brand_id: 'brand_1',
  reason: 'talent contract ended',
  effective_at: '2026-04-19T00:00:00Z',
  revoked_uses: ['likeness'],
})

const creativeStatus = () => ({
  idempotency_key: `whk_${crypto.randomUUID()}`,
  notification_id: 'cs_cr_1_rejected',
  notification_type: 'creative.status_changed',
  fired_at: '2026-04-18T10:00:00Z',
  subscriber_id: 'buyer-primary',
  account_id: 'acc_1',
  creative_id: 'cr_1',
  transition: { from: 'approved', to: 'rejected', observed_at: '2026-04-18T09:59:00Z' },
  reason_code: 'policy_revocation',
  initiator: 'seller',
})
const creativePurged = () => ({
  idempotency_key: `whk_${crypto.randomUUID()}`,
  notification_id: 'cp_cr_1',
  notification_type: 'creative.purged',
  fired_at: '2026-04-18T10:00:00Z',
  subscriber_id: 'buyer-primary',
  account_id: 'acc_1',
  creative_id: 'cr_1',
  purge_kind: 'soft',
  purged_at: '2026-04-18T09:59:00Z',
  reason_code: 'retention_expired',
  initiator: 'seller',
})

const cases = [
  ['artifact-push', 'content-standards/artifact-webhook-payload.json', artifactPush],
  ['revocation-notification', 'brand/revocation-notification.json', revocation],
  ['creative-status-changed', 'creative/creative-status-changed-webhook.json', creativeStatus],
  ['creative-purged', 'creative/creative-purged-webhook.json', creativePurged],
] as const

const setup = () =>
  receiverWith([
    {
      id: 'artifact-push',
      auth: { mode: 'rfc9421', keys: key.jwks },
      sender: SELLER,
      shape: 'artifact-push',
    },
    {
      id: 'revocation-notification',
      auth: { mode: 'hmac', secret: HMAC_SECRET },
      sender: 'https://rights-holder.example',
      shape: 'revocation-notification',
    },
    {
      id: 'creative-status-changed',
      auth: { mode: 'rfc9421', keys: key.jwks },
      sender: SELLER,
      shape: 'creative-status-changed',
    },
    {
      id: 'creative-purged',
      auth: { mode: 'rfc9421', keys: key.jwks },
      sender: SELLER,
      shape: 'creative-purged',
    },
    {
      id: 'capabilities-changed',
      auth: { mode: 'rfc9421', keys: key.jwks },
      sender: SELLER,
      shape: 'capabilities-changed',
    },
    {
      id: 'account-status-changed',
      auth: { mode: 'rfc9421', keys: key.jwks },
      sender: SELLER,
      shape: 'account-status-changed',
    },
  ])
const deliver = (shape: PayloadShape, payload: unknown) =>
  shape === 'revocation-notification' ? hmacSigned(shape, payload) : signed(key, shape, payload)

describe('receiver: artifact pushes and revocation notifications', () => {
  it.each(cases)('%s: checks exactly the members its 3.1.19 schema requires', (shape, file) => {
    const schema = readConformanceJson(`schemas/3.1.19/${file}`) as { required: string[] }
    expect(['idempotency_key', ...Object.keys(KEYED_EVENT_MEMBERS[shape])].sort()).toEqual(
      [...schema.required].sort(),
    )
  })

  it.each(cases)('%s: publishes once and answers a retry as a duplicate', async (shape, _file, make) => {
    const { receiver, published } = setup()
    const payload = make()
    expect(await answer(await receiver.handle(await deliver(shape, payload)))).toEqual({
      status: 200,
      body: { status: 'accepted' },
    })
    expect(await answer(await receiver.handle(await deliver(shape, payload)))).toEqual({
      status: 200,
      body: { status: 'duplicate' },
    })
    expect(published).toHaveLength(1)
    expect(published[0]).toMatchObject({ shape, idempotencyKey: payload.idempotency_key, terminal: false })
    expect(published[0]!.data).toEqual(payload)
    const changed = { ...payload, media_buy_id: 'mb_2', rights_id: 'rg_2', creative_id: 'cr_2' }
    expect((await answer(await receiver.handle(await deliver(shape, changed)))).body.error?.code).toBe(
      'idempotency_key_reused',
    )
  })

  it.each(cases)(
    '%s: refuses a payload missing any required member, before publishing',
    async (shape, file, make) => {
      const { receiver, published } = setup()
      const schema = readConformanceJson(`schemas/3.1.19/${file}`) as { required: string[] }
      for (const member of schema.required) {
        const { [member]: _dropped, ...rest } = make() as Record<string, unknown>
        const refused = await answer(await receiver.handle(await deliver(shape, rest)))
        expect(refused.status, member).toBe(400)
        expect(refused.body.error?.code, member).toBe(
          member === 'idempotency_key' ? 'missing_idempotency_key' : 'invalid_envelope',
        )
      }
      const badTime = { ...make(), effective_at: 'tomorrow', timestamp: 'tomorrow', fired_at: 'tomorrow' }
      expect((await receiver.handle(await deliver(shape, badTime))).status).toBe(400)
      const shortKey = { ...make(), idempotency_key: 'short' }
      expect((await receiver.handle(await deliver(shape, shortKey))).status).toBe(400)
      expect(published).toEqual([])
    },
  )

  it('capabilities-changed: needs capabilities_version, publishes once, a retry is a duplicate', async () => {
    const { receiver, published } = setup()
    const payload = {
      idempotency_key: `whk_${crypto.randomUUID()}`,
      capabilities_version: 'v2',
      subscriber_id: 'ops',
    }
    expect(
      (await answer(await receiver.handle(await signed(key, 'capabilities-changed', payload)))).status,
    ).toBe(200)
    expect(
      (await answer(await receiver.handle(await signed(key, 'capabilities-changed', payload)))).body,
    ).toEqual({
      status: 'duplicate',
    })
    const { capabilities_version: _v, ...bare } = {
      ...payload,
      idempotency_key: `whk_${crypto.randomUUID()}`,
    }
    expect((await receiver.handle(await signed(key, 'capabilities-changed', bare))).status).toBe(400)
    expect(published).toHaveLength(1)
    expect(published[0]).toMatchObject({ shape: 'capabilities-changed', data: payload })
  })

  it('account-status-changed: needs account_id and a transition, publishes once, a retry is a duplicate', async () => {
    const { receiver, published } = setup()
    const payload = {
      idempotency_key: `whk_${crypto.randomUUID()}`,
      notification_id: 'account:acct_1:suspended:2026-11-28T10:00:00Z',
      notification_type: 'account.status_changed',
      fired_at: '2026-11-28T10:00:00Z',
      subscriber_id: 'ops',
      account_id: 'acct_1',
      transition: { from: 'active', to: 'suspended', observed_at: '2026-11-28T10:00:00Z' },
    }
    const send = async (body: unknown) => receiver.handle(await signed(key, 'account-status-changed', body))
    expect((await answer(await send(payload))).status).toBe(200)
    expect((await answer(await send(payload))).body).toEqual({ status: 'duplicate' })
    const { transition: _t, ...bare } = { ...payload, idempotency_key: `whk_${crypto.randomUUID()}` }
    expect((await send(bare)).status).toBe(400)
    const wrongType = { ...payload, idempotency_key: `whk_${crypto.randomUUID()}`, notification_type: 'x' }
    expect((await send(wrongType)).status).toBe(400)
    expect(published).toHaveLength(1)
    expect(published[0]).toMatchObject({ shape: 'account-status-changed', data: payload })
  })
})
