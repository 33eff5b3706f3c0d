/**
 * Event-specific payloads to notification_configs[] subscribers, and the fire log behind webhook_activity:
 * the sender builds the payload (the members every such payload carries, then the event's own), delivers it
 * like any entry (RFC 9421, or the registered legacy scheme), and notes the fire for its owner only.
 */
import { MemoryReplayStore, verifyBearerWebhook, verifyHmacWebhook } from '@adwire/http-signatures'
import { describe, expect, it } from 'vitest'
import { WebhookError } from '../errors.js'
import { senderTestKit } from '../testing/sender.js'
import type { FireLogStore, FireRecord } from './fire-log.js'

const SECRET = 'hmac-secret-for-the-subscriber-tests-01234'
const BEARER = 'bearer-credential-for-the-subscriber-tests'
const kit = senderTestKit('seller-subscriber-test')
const { endpoint, setup, verify } = kit

/** A fire log on a Map, as a caller's table would be. */
function mapFireLog(): FireLogStore & { rows: Map<string, { owner: string; fire: FireRecord }> } {
  const rows = new Map<string, { owner: string; fire: FireRecord }>()
  return {
    rows,
    put: async (owner, fire) => void rows.set(fire.idempotency_key, { owner, fire }),
    get: async (key) => rows.get(key),
  }
}

const statusChanged = {
  notification_type: 'creative.status_changed',
  payload: {
    account_id: 'acc_1',
    creative_id: 'cr_1',
    transition: { from: 'pending_review', to: 'approved' },
  },
}

describe('createWebhookSender: subscriber notify', () => {
  it('builds the event-specific payload, signs it (RFC 9421) and notes the fire for its owner', async () => {
    const buyer = await endpoint()
    const fireLog = mapFireLog()
    const { sender, clock } = setup({ fireLog })
    const key = await sender.notify(
      {
        channel: 'subscriber',
        config: { url: `${buyer.origin}/events?x=1`, subscriber_id: 'sub_1' },
        destination: 'subscriber:account:acc_1:sub_1',
      },
      statusChanged,
      { fire: { owner: 'buyer-a' } },
    )
    await sender.drain()
    const [request] = buyer.requests
    const body = JSON.parse(request!.text) as Record<string, unknown>
    expect(Object.keys(body).slice(0, 4)).toEqual([
      'idempotency_key',
      'notification_type',
      'fired_at',
      'subscriber_id',
    ])
    expect(body).toEqual({
      idempotency_key: key,
      notification_type: 'creative.status_changed',
      fired_at: new Date(Math.floor(clock.now()) * 1000).toISOString().replace('.000Z', 'Z'),
      subscriber_id: 'sub_1',
      ...statusChanged.payload,
    })
    expect((await verify(request!, new MemoryReplayStore(), clock.now())).keyid).toBe(
      'seller-subscriber-test',
    )
    expect(fireLog.rows.get(key)?.owner).toBe('buyer-a')

    const rows = await sender.webhookActivity('subscriber:account:acc_1:sub_1', 'buyer-a')
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      idempotency_key: key,
      subscriber_id: 'sub_1',
      notification_type: 'creative.status_changed',
      status: 'success',
      http_status_code: 200,
      attempt: 1,
      url: `${buyer.origin}/events`,
      payload_size_bytes: Buffer.byteLength(request!.text),
    })
    // Another principal, or another destination, sees none of it.
    expect(await sender.webhookActivity('subscriber:account:acc_1:sub_1', 'buyer-b')).toEqual([])
    expect(await sender.webhookActivity('subscriber:account:acc_2:sub_1', 'buyer-a')).toEqual([])
  })

  it('signs with the legacy scheme the config registered, never both, and keeps the credential off the wire', async () => {
    const buyer = await endpoint()
    const { sender, clock } = setup()
    await sender.notify(
      {
        channel: 'subscriber',
        config: {
          url: `${buyer.origin}/hmac`,
          subscriber_id: 'sub_h',
          authentication: { schemes: ['HMAC-SHA256'], credentials: SECRET },
        },
      },
      statusChanged,
    )
    await sender.notify(
      {
        channel: 'subscriber',
        config: {
          url: `${buyer.origin}/bearer`,
          subscriber_id: 'sub_b',
          authentication: { schemes: ['Bearer'], credentials: BEARER },
        },
      },
      { notification_type: 'account.status_changed', payload: { account_id: 'acc_1' } },
    )
    await sender.drain()
    const hmac = buyer.requests.find((request) => request.url.endsWith('/hmac'))!
    const bearer = buyer.requests.find((request) => request.url.endsWith('/bearer'))!
    await expect(
      verifyHmacWebhook({ headers: hmac.headers, body: hmac.body }, { secret: SECRET, now: clock.now() }),
    ).resolves.toEqual({ timestamp: clock.now() })
    expect(hmac.headers['signature-input']).toBeUndefined()
    await expect(verifyBearerWebhook(bearer.headers, BEARER)).resolves.toBeUndefined()
    for (const request of [hmac, bearer])
      expect(Object.keys(request.headers).some((name) => name.startsWith('x-adwire'))).toBe(false)
  })

  it('refuses a config without subscriber_id or an event without a type, storing nothing', async () => {
    const { sender, outbox } = setup()
    const code = (promise: Promise<unknown>) =>
      promise.then(
        () => 'resolved',
        (error: unknown) => (WebhookError.is(error) ? error.code : String(error)),
      )
    expect(
      await code(
        sender.notify(
          { channel: 'subscriber', config: { url: 'https://buyer.example/e', subscriber_id: '' } },
          statusChanged,
        ),
      ),
    ).toBe('INVALID_REQUEST')
    expect(
      await code(
        sender.notify(
          { channel: 'subscriber', config: { url: 'https://buyer.example/e', subscriber_id: 's' } },
          { notification_type: '', payload: {} },
        ),
      ),
    ).toBe('INVALID_REQUEST')
    expect(await outbox.pending()).toEqual([])
  })

  it('notes a media buy fire (delivery report) with its sequence number for the buy owner', async () => {
    const buyer = await endpoint()
    const fireLog = mapFireLog()
    const { sender } = setup({ fireLog })
    const reporting = {
      channel: 'adcp' as const,
      config: { url: `${buyer.origin}/reports`, operation_id: 'op_r' },
      destination: 'buy:mb_1',
    }
    const key = await sender.mediaBuy({ mediaBuyId: 'mb_1', reporting, owner: 'buyer-a' }).report({
      result: {
        notification_type: 'scheduled',
        sequence_number: 3,
        reporting_period: { start: '2026-01-01T00:00:00Z', end: '2026-01-02T00:00:00Z' },
        currency: 'USD',
        media_buy_deliveries: [],
      },
    })
    await sender.drain()
    expect(fireLog.rows.get(key)).toMatchObject({
      owner: 'buyer-a',
      fire: {
        notification_type: 'scheduled',
        sequence_number: 3,
        media_buy_id: 'mb_1',
        destination: 'buy:mb_1',
      },
    })
    const [row] = await sender.webhookActivity('buy:mb_1', 'buyer-a')
    expect(row).toMatchObject({ sequence_number: 3, ext: { media_buy_id: 'mb_1' }, status: 'success' })
  })
})
