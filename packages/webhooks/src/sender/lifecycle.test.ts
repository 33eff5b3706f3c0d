import { describe, expect, it } from 'vitest'
import { senderTestKit } from '../testing/sender.js'
import type { DeliveryReport, WebhookRegistration, WebhookSenderOptions } from './types.js'

const kit = senderTestKit('seller-lifecycle-test')
const setup = (overrides: Partial<WebhookSenderOptions> = {}) => kit.buyerSetup(overrides)

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: { code?: string; message?: string }) => ({ code: error.code, message: error.message }),
  )

const report = (type: string, extra: Record<string, unknown> = {}): DeliveryReport => ({
  result: {
    notification_type: type,
    ...(type === 'scheduled' ? { sequence_number: 3 } : {}),
    reporting_period: { start: '2026-04-17T00:00:00Z', end: '2026-04-17T23:59:59Z' },
    currency: 'USD',
    media_buy_deliveries: [
      { media_buy_id: 'mb_1', status: 'active', totals: { impressions: 1000, spend: 12.5 }, by_package: [] },
    ],
    ...extra,
  },
})

const impairment = (id: string, state: string) => ({
  task_id: 'task_buy',
  task_type: 'create_media_buy',
  status: 'completed',
  notification_id: `imp_${id}`,
  message: `creative ${id} ${state}`,
})

describe('task webhooks', () => {
  it('sends nothing for a terminal initial response', async () => {
    const { sender, registration, outbox } = await setup()
    const task = sender.task(registration('task'), {
      task_id: 't1',
      task_type: 'sync_creatives',
      status: 'completed',
    })
    expect(task.terminal).toBe(true)
    expect(await rejection(task.update('working'))).toMatchObject({ code: 'webhook_after_terminal' })
    expect(await outbox.pending()).toEqual([])
  })

  it('sends one webhook per later status change, then nothing after the terminal one', async () => {
    const { sender, registration, bodies } = await setup()
    const task = sender.task(registration('task'), {
      task_id: 't2',
      task_type: 'create_media_buy',
      status: 'submitted',
    })
    const keys = [
      await task.update('working', { result: { percentage: 10 } }),
      await task.update('working', { result: { percentage: 50 } }),
      await task.update('input-required', { message: 'approve' }),
      await task.update('working'),
      await task.update('completed', { result: { media_buy_id: 'mb_1', packages: [] } }),
    ]
    expect(keys[1]).toBeUndefined()
    expect(await rejection(task.update('failed'))).toMatchObject({ code: 'webhook_after_terminal' })
    expect(await rejection(task.update('bogus' as string))).toMatchObject({ code: 'webhook_after_terminal' })
    await sender.drain()
    expect(bodies().map((body) => body.status)).toEqual(['working', 'input-required', 'working', 'completed'])
    expect(bodies().map((body) => body.idempotency_key)).toEqual(keys.filter(Boolean))
  })
})

describe('media buy webhooks', () => {
  it('validates scheduled delivery reports and never coalesces them', async () => {
    const { sender, registration, bodies } = await setup()
    const buy = sender.mediaBuy({ mediaBuyId: 'mb_1', reporting: registration('reports', 'op_reports') })
    await buy.report(report('scheduled'))
    await buy.report(report('scheduled', { sequence_number: 4 }))
    expect(
      await rejection(buy.report(report('scheduled', { aggregated_totals: { impressions: 1 } }))),
    ).toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringContaining('aggregated_totals'),
    })
    const { sequence_number: _omitted, ...noSequence } = report('scheduled').result
    expect(await rejection(buy.report({ result: noSequence }))).toMatchObject({
      message: expect.stringContaining('sequence_number'),
    })
    const { currency: _currency, ...noCurrency } = report('scheduled').result
    expect(await rejection(buy.report({ result: noCurrency }))).toMatchObject({
      message: expect.stringContaining('currency'),
    })
    expect(await rejection(buy.report(report('final')))).toMatchObject({ code: 'INVALID_REQUEST' })
    const reporting = registration('reports', 'op_reports')
    const event = {
      task_id: 'r',
      task_type: 'media_buy_delivery',
      status: 'completed',
      result: report('delayed').result,
    }
    expect(await rejection(sender.notify(reporting, event, { coalesce: { key: 'k' } }))).toMatchObject({
      message: expect.stringContaining('exempt'),
    })
    expect(await rejection(sender.notify(reporting, { ...event, notification_id: 'n1' }))).toMatchObject({
      code: 'INVALID_REQUEST',
    })
    expect(await rejection(sender.notify(reporting, { ...event, status: 'active' }))).toMatchObject({
      code: 'INVALID_REQUEST',
    })
    await sender.drain()
    expect(bodies()).toHaveLength(2)
    expect(bodies()[0]).toMatchObject({
      operation_id: 'op_reports',
      task_id: 'delivery_mb_1_3',
      task_type: 'media_buy_delivery',
      status: 'completed',
      result: { notification_type: 'scheduled', sequence_number: 3, currency: 'USD' },
    })
    expect(bodies()[0]!.notification_id).toBeUndefined()
  })

  it('on termination: queued impairments first, then the final report, then nothing more', async () => {
    const { sender, registration, bodies, buyer, outbox } = await setup()
    const buy = sender.mediaBuy({
      mediaBuyId: 'mb_1',
      notifications: registration('events', 'op_buy'),
      reporting: registration('reports', 'op_reports'),
    })
    await buy.impairment(impairment('cr_1', 'suspended'), { key: 'creative:cr_1' })
    await buy.impairment(impairment('cr_2', 'revoked'), { key: 'creative:cr_2' })
    await sender.drain()
    expect(buyer.requests).toHaveLength(0)
    expect((await outbox.pending()).length).toBe(2)

    await buy.finish('completed', report('final'))
    await sender.drain()
    expect(
      bodies().map(
        (body) => body.notification_id ?? (body.result as { notification_type: string }).notification_type,
      ),
    ).toEqual(['imp_cr_1', 'imp_cr_2', 'final'])
    expect(await rejection(buy.impairment(impairment('cr_3', 'x'), { key: 'creative:cr_3' }))).toMatchObject({
      code: 'webhook_after_final',
    })
    expect(await rejection(buy.report(report('scheduled')))).toMatchObject({ code: 'webhook_after_final' })
    expect(await rejection(buy.finish('completed', report('final')))).toMatchObject({
      code: 'webhook_after_final',
    })
    const reporting = registration('reports', 'op_reports')
    const adjusted = {
      task_id: 'r',
      task_type: 'media_buy_delivery',
      status: 'completed',
      result: report('adjusted').result,
    }
    expect(await rejection(sender.notify(reporting, adjusted))).toMatchObject({ code: 'webhook_after_final' })
    const task = sender.task(registration('events'), {
      task_id: 'u',
      task_type: 'update_media_buy',
      status: 'submitted',
      mediaBuyId: 'mb_1',
    })
    expect(await rejection(task.update('working'))).toMatchObject({ code: 'webhook_after_final' })
    const restarted = sender.mediaBuy({
      mediaBuyId: 'mb_2',
      status: 'canceled',
      notifications: registration('events'),
    })
    expect(await rejection(restarted.impairment(impairment('cr_9', 'x'), { key: 'k' }))).toMatchObject({
      code: 'webhook_after_final',
    })
  })

  it('with 4 workers, the final report to the same URL waits for an earlier impairment being retried; other buys do not', async () => {
    const { sender, clock } = await setup({ concurrency: 4, random: () => 0 })
    let failures = 1
    const buyer = await kit.endpoint({
      fallback: (request, response) => {
        const fail = request.text.includes('"imp_cr_1"') && failures-- > 0
        response.writeHead(fail ? 503 : 200)
        response.end()
      },
    })
    const registration = (path: string): WebhookRegistration => ({
      channel: 'adcp',
      config: { url: `${buyer.origin}/${path}`, operation_id: `op_${path}` },
    })
    const buy = sender.mediaBuy({
      mediaBuyId: 'mb_1',
      notifications: registration('events'),
      // The same receiver URL: order is kept per URL (another URL would not wait).
      reporting: { channel: 'adcp', config: { url: `${buyer.origin}/events`, operation_id: 'op_reports' } },
    })
    const other = sender.mediaBuy({ mediaBuyId: 'mb_2', notifications: registration('events') })
    const received = () =>
      buyer.requests.map((request) => {
        const body = JSON.parse(request.text) as {
          notification_id?: string
          result?: { notification_type?: string }
        }
        return body.notification_id ?? body.result?.notification_type
      })
    await buy.impairment(impairment('cr_1', 'suspended'), {
      key: 'creative:cr_1',
      class: 'latency-sensitive',
    })
    await buy.finish('completed', report('final'))
    await other.impairment(impairment('cr_2', 'revoked'), {
      key: 'creative:cr_2',
      class: 'latency-sensitive',
    })
    // Three entries due and four free workers: both impairments go (cr_1 gets a 503), the final report waits.
    await sender.drain()
    expect(received().sort()).toEqual(['imp_cr_1', 'imp_cr_2'])
    expect((await sender.activity('op_events')).map((row) => row.http_status_code).sort()).toEqual([200, 503])

    clock.advance(2)
    await sender.drain()
    expect(received().slice(2)).toEqual(['imp_cr_1', 'final'])
    expect(await sender.activity('op_reports')).toEqual([
      expect.objectContaining({ status: 'success', http_status_code: 200, attempt: 1 }),
    ])
  })
})
