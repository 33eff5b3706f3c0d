import { openPostgresStores } from '@adwire/store-postgres'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { createWebhookReceiver, type WebhookReceiver } from '@adwire/webhooks'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { delivery, envelope, sellerKey, type SellerKey } from './fixtures.js'

const url = await resolveTestPostgresUrl()
const schema = `adwire_it_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`

describe.skipIf(!url)('two receivers sharing one PostgreSQL store', () => {
  let key: SellerKey
  const closers: Array<() => Promise<void>> = []
  const receivers: WebhookReceiver[] = []
  const published: string[] = []

  beforeAll(async () => {
    key = await sellerKey()
    for (let index = 0; index < 2; index += 1) {
      const stores = await openPostgresStores({ connectionString: url!, schema, maxConnections: 10 })
      closers.push(() => stores.close())
      receivers.push(
        createWebhookReceiver({
          registration: () => ({
            id: 'seller',
            auth: { mode: 'rfc9421', keys: key.jwks },
            sender: 'https://seller.example.com',
          }),
          claims: stores.claims,
          convergence: stores.convergence,
          replayStore: stores.replay,
          publish: async (event) => {
            // Widen the race: the owner is busy while the other deliveries arrive.
            await new Promise((resolve) => setTimeout(resolve, 25))
            published.push(event.idempotencyKey)
          },
        }),
      )
    }
  })

  afterAll(async () => {
    for (const close of closers) await close()
    const client = new pg.Client({ connectionString: url! })
    await client.connect()
    await client.query(`drop schema if exists ${schema} cascade`)
    await client.end()
  })

  it('publishes 200 concurrent deliveries of one event exactly once; every answer is 200 or 503', async () => {
    const payload = envelope()
    const requests = await Promise.all(Array.from({ length: 200 }, () => delivery(key, payload)))
    const responses = await Promise.all(
      requests.map((request, index) => receivers[index % 2]!.handle(request)),
    )
    const statuses = responses.map((response) => response.status)
    expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([])
    expect(statuses).toContain(200)
    expect(published.filter((key) => key === payload.idempotency_key)).toHaveLength(1)
    // A retry after the owner finished is a plain duplicate.
    expect((await receivers[1]!.handle(await delivery(key, payload))).status).toBe(200)
    expect(published.filter((key) => key === payload.idempotency_key)).toHaveLength(1)
  })
})
