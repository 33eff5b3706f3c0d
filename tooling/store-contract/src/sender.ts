/**
 * The firing rules of a media buy's end on a durable outbox, driven through the real sender: "queued
 * impairments first, then the `final` delivery report, then nothing more" must hold with several workers and
 * several senders on one outbox, and after a restart. The buyer is a real HTTP server on 127.0.0.1.
 *
 * @example
 * describeSenderFinalRules('sqlite', async () => { ... return { outbox, peer, restart, close } })
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { generateSigningKey, type GeneratedSigningKey } from '@adwire/http-signatures'
import {
  createWebhookSender,
  WebhookError,
  type OutboxStore,
  type WebhookRegistration,
} from '@adwire/webhooks'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { report } from './reports.js'

/** One outbox's data, reachable through two handles, that a test can restart. */
export interface SenderStores {
  readonly outbox: OutboxStore
  /** A second handle on the same data (another connection or pool), as another sender process would have. */
  readonly peer: OutboxStore
  /** Closes both handles and opens the same data again, as a restarted process would. */
  restart(): Promise<OutboxStore>
  /** Closes whatever is open and removes the data. */
  close(): Promise<void>
}

interface Received {
  readonly path: string
  /** `notification_id` of an impairment, `notification_type` of a delivery report. */
  readonly event: string
  readonly status: number
}

/** A buyer endpoint that answers 503 to the first `failFirst` requests of each listed event, then 200. */
async function startBuyer(failFirst: Readonly<Record<string, number>>) {
  const received: Received[] = []
  const failures = new Map(Object.entries(failFirst))
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        notification_id?: string
        result?: { notification_type?: string }
      }
      const event = body.notification_id ?? body.result?.notification_type ?? '?'
      const left = failures.get(event) ?? 0
      const status = left > 0 ? 503 : 200
      failures.set(event, left - 1)
      received.push({ path: request.url ?? '', event, status })
      response.writeHead(status, { 'content-type': 'application/json' })
      response.end(status === 200 ? '{"ok":true}' : '{"error":"busy"}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Waits for `condition`, polling; fails with `what` after 15 s. */
async function until(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => (WebhookError.is(error) ? error.code : String(error)),
  )

const impairment = (id: string) => ({
  task_id: `task_${id}`,
  task_type: 'create_media_buy',
  status: 'completed',
  notification_id: id,
  message: `creative ${id} suspended`,
})

/**
 * Declares the sender tests on the outbox `open` provides (fresh data per test), or skips them when it
 * resolves with undefined.
 */
export function describeSenderFinalRules(name: string, open: () => Promise<SenderStores | undefined>): void {
  describe(`sender firing rules on ${name}`, () => {
    let key: GeneratedSigningKey | undefined
    const cleanups: Array<() => Promise<void>> = []
    beforeAll(async () => {
      key = await generateSigningKey({ alg: 'ed25519', kid: `store-contract-${name}` })
    })
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
    })

    async function setup() {
      const stores = await open()
      if (!stores) throw new Error(`${name} did not open its outbox`)
      cleanups.push(() => stores.close())
      return stores
    }
    const senderOn = (outbox: OutboxStore) => {
      const sender = createWebhookSender({
        outbox,
        key: key!.privateJwk,
        concurrency: 4,
        pollIntervalMs: 20,
        retry: { baseDelaySeconds: 0.05, maxDelaySeconds: 0.2 },
      })
      cleanups.push(() => sender.stop())
      return sender
    }
    const registration = (origin: string, path: string): WebhookRegistration => ({
      channel: 'adcp',
      config: { url: `${origin}/${path}`, operation_id: `op_${path}` },
    })

    it('with 4 workers in each of two senders, the final report to the same URL goes only after the impairment that failed first', async () => {
      const stores = await setup()
      const buyer = await startBuyer({ imp_retried: 2 })
      cleanups.push(() => buyer.close())
      const [first, second] = [senderOn(stores.outbox), senderOn(stores.peer)]
      const buy = first.mediaBuy({
        mediaBuyId: 'mb_ordered',
        notifications: registration(buyer.origin, 'events'),
        reporting: registration(buyer.origin, 'events'),
      })
      const other = second.mediaBuy({
        mediaBuyId: 'mb_other',
        notifications: registration(buyer.origin, 'events'),
      })
      first.start()
      second.start()
      await buy.impairment(impairment('imp_retried'), { key: 'creative:1', class: 'latency-sensitive' })
      await until('the first 503', () => buyer.received.some((request) => request.status === 503))
      // Enqueued while the impairment waits for its retry; free workers would send it at once.
      await buy.finish('completed', report('mb_ordered', 'final'))
      await other.impairment(impairment('imp_other'), { key: 'creative:2', class: 'latency-sensitive' })
      await until('the final report', () => buyer.received.some((request) => request.event === 'final'))
      await until('the other impairment', () =>
        buyer.received.some((request) => request.event === 'imp_other'),
      )
      await until('an empty outbox', async () => (await stores.outbox.pending()).length === 0)

      const ordered = buyer.received
        .filter((request) => request.event !== 'imp_other')
        .map((request) => `${request.event} ${request.status}`)
      expect(ordered).toEqual(['imp_retried 503', 'imp_retried 503', 'imp_retried 200', 'final 200'])
      expect(await rejection(buy.impairment(impairment('imp_late'), { key: 'creative:1' }))).toBe(
        'webhook_after_final',
      )
      // The other sender learns it from the outbox.
      expect(
        await rejection(
          second.notify(registration(buyer.origin, 'events'), impairment('imp_late'), {
            mediaBuyId: 'mb_ordered',
          }),
        ),
      ).toBe('webhook_after_final')
    })

    it('a push URL answering 503 never delays the final report to a healthy reporting URL', async () => {
      const stores = await setup()
      const failing = await startBuyer({ imp_stuck: 1_000_000 })
      const healthy = await startBuyer({})
      cleanups.push(
        () => failing.close(),
        () => healthy.close(),
      )
      const sender = senderOn(stores.outbox)
      const buy = sender.mediaBuy({
        mediaBuyId: 'mb_split',
        notifications: registration(failing.origin, 'events'),
        reporting: registration(healthy.origin, 'reports'),
      })
      sender.start()
      await buy.impairment(impairment('imp_stuck'), { key: 'creative:1', class: 'latency-sensitive' })
      await until('the first 503', () => failing.received.length > 0)
      await buy.finish('completed', report('mb_split', 'final'))
      await until('the final report', () => healthy.received.some((request) => request.event === 'final'))
      expect(healthy.received.map((request) => `${request.event} ${request.status}`)).toEqual(['final 200'])
      // The impairment is still being retried at its own URL, not given up.
      expect(
        failing.received.every((request) => request.event === 'imp_stuck' && request.status === 503),
      ).toBe(true)
      // The final report's delivery is recorded just after the buyer answered it.
      await until('the final report recorded', async () => (await stores.outbox.pending()).length === 1)
      expect((await stores.outbox.pending()).map((entry) => entry.url)).toEqual([`${failing.origin}/events`])
      expect(await rejection(buy.impairment(impairment('imp_late'), { key: 'creative:1' }))).toBe(
        'webhook_after_final',
      )
    })

    it('after a restart, refuses every event of a buy whose final report was queued, or which closed without one', async () => {
      const stores = await setup()
      const before = createWebhookSender({ outbox: stores.outbox, key: key!.privateJwk })
      const events = registration('https://buyer.example', 'events')
      const reports = registration('https://buyer.example', 'reports')
      await before
        .mediaBuy({ mediaBuyId: 'mb_final', notifications: events, reporting: reports })
        .finish('completed', report('mb_final', 'final'))
      expect(
        await before.mediaBuy({ mediaBuyId: 'mb_silent', notifications: events }).finish('canceled', {
          result: report('mb_silent', 'final').result,
        }),
      ).toBeUndefined()

      const outbox = await stores.restart()
      // A new sender for every call, so that each one finds the buy closed in the outbox, not in its memory.
      const fresh = () => createWebhookSender({ outbox, key: key!.privateJwk })
      for (const mediaBuyId of ['mb_final', 'mb_silent']) {
        const tracker = (withReporting: boolean) =>
          fresh().mediaBuy({
            mediaBuyId,
            notifications: events,
            ...(withReporting ? { reporting: reports } : {}),
          })
        expect(await rejection(fresh().notify(events, impairment('imp_x'), { mediaBuyId }))).toBe(
          'webhook_after_final',
        )
        expect(await rejection(tracker(true).impairment(impairment('imp_y'), { key: 'creative:9' }))).toBe(
          'webhook_after_final',
        )
        expect(await rejection(tracker(true).report(report(mediaBuyId, 'scheduled')))).toBe(
          'webhook_after_final',
        )
        expect(await rejection(tracker(true).finish('completed', report(mediaBuyId, 'final')))).toBe(
          'webhook_after_final',
        )
        expect(await rejection(tracker(false).finish('canceled', report(mediaBuyId, 'final')))).toBe(
          'webhook_after_final',
        )
      }
      const after = fresh()
      // An open buy is not affected; only the final report and nothing else is queued for the closed ones.
      expect(await after.notify(events, impairment('imp_open'), { mediaBuyId: 'mb_open' })).toEqual(
        expect.any(String),
      )
      expect((await outbox.pending()).map((entry) => [entry.mediaBuyIds, entry.barrier])).toEqual([
        [['mb_final'], true],
        [['mb_open'], false],
      ])
    })
  })
}
