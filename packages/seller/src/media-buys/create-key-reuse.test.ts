/**
 * A create's buy id derives from the caller and its idempotency key (a retry after a crash finds the buy it
 * stored), within the replay window only: the same key used again after the window is a new request (AdCP) and
 * books a new buy, which its own retries then find. On a real SQLite file, with the seller's clock moved.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TaskContext } from '@adwire/agent-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSeller } from '../open/open-seller.js'
import type { SellerRuntime } from '../open/types.js'
import { homepageCatalog, testSettings } from '../testing/fixtures.js'
import { createMediaBuy } from './create.js'
import { BUY_KIND } from './repository.js'

const dir = mkdtempSync(join(tmpdir(), 'adwire-key-reuse-'))
const WINDOW = 3600
let offset = 0
let runtime: SellerRuntime

beforeAll(async () => {
  runtime = await openSeller({
    settings: testSettings(),
    catalog: homepageCatalog(),
    delivery: () => [],
    database: { kind: 'sqlite', path: join(dir, 'seller.sqlite') },
    publicUrl: 'https://seller.example',
    idempotencyTtlSeconds: WINDOW,
    now: () => Date.now() / 1000 + offset,
  })
})
afterAll(async () => {
  await runtime?.close()
  rmSync(dir, { recursive: true, force: true })
})

const context = (owner: string): TaskContext => ({
  principal: { principal_id: owner, permissions: { media_buys: ['read', 'write'] } },
  envelope: {},
  protocol: 'mcp',
  now: new Date(),
  updates: () => ({ update: async () => {} }),
  webhooks: { task: 'create_media_buy', registrations: [] },
})

const create = async (owner: string, key: string) =>
  (
    await createMediaBuy(
      runtime.seller,
      {
        idempotency_key: key,
        account: { brand: { domain: 'acme.example' }, operator: 'acme.example' },
        brand: { domain: 'acme.example' },
        start_time: 'asap',
        end_time: '2099-06-30T23:59:59Z',
        packages: [{ product_id: 'homepage', pricing_option_id: 'cpm', budget: 5000 }],
      },
      context(owner),
    )
  ).media_buy_id as string

describe('an idempotency key used again', () => {
  it('within the replay window finds the buy; after it books a new one, found by its own retries', async () => {
    const key = `key_${crypto.randomUUID()}`
    const first = await create('buyer-1', key)
    expect(await create('buyer-1', key)).toBe(first)
    // Another caller's key of the same text is its own.
    const others = await create('buyer-2', key)
    expect(others).not.toBe(first)

    offset += WINDOW + 1
    const second = await create('buyer-1', key)
    expect(second).not.toBe(first)
    expect(await create('buyer-1', key)).toBe(second)

    offset += WINDOW + 1
    const third = await create('buyer-1', key)
    expect(new Set([first, second, third]).size).toBe(3)
    for (const id of [first, second, third])
      expect((await runtime.seller.records.get(BUY_KIND, id))?.owner).toBe('buyer-1')
  })
})
