/**
 * Two sales agents on one PostgreSQL schema (a fresh schema per run, dropped after): a buy created on one is
 * read, paused and canceled on the other; an idempotency_key used on one replays on the other (and a changed
 * request under it conflicts there); concurrent updates of one buy from both keep every change (compare-and-set);
 * both share one signing key and the migrations ran once.
 */
import { dropSchema, freshSchemaName, resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningSalesAgent } from './service.js'
import {
  ACCOUNT,
  BUYER_TOKEN,
  buyRequest,
  displayCreative,
  mcpFails,
  mcpOk,
  newKey,
  startTestAgent,
} from './test-support.js'

const url = await resolveTestPostgresUrl()
const schema = freshSchemaName('sales_test')
let first: RunningSalesAgent
let second: RunningSalesAgent

describe.skipIf(!url)('two sales agents on one PostgreSQL schema', () => {
  beforeAll(async () => {
    const env = { DATABASE_URL: url!, DATABASE_SCHEMA: schema, PUBLIC_URL: 'https://sales.pg.test' }
    ;[first, second] = await Promise.all([startTestAgent(env), startTestAgent(env)])
  })

  afterAll(async () => {
    await first?.close()
    await second?.close()
    await dropSchema(url!, schema)
  })

  it('share buys, creatives and one signing key', async () => {
    expect(first.runtime.deps.key.publicJwk.kid).toBe(second.runtime.deps.key.publicJwk.kid)
    await mcpOk(
      first,
      BUYER_TOKEN,
      'sync_creatives',
      { idempotency_key: newKey(), account: ACCOUNT, creatives: [displayCreative('pg_creative')] },
      'creative/sync-creatives-response.json',
    )
    const created = await mcpOk(
      first,
      BUYER_TOKEN,
      'create_media_buy',
      buyRequest({ context: { on: 'first' } }, { creative_assignments: [{ creative_id: 'pg_creative' }] }),
      'media-buy/create-media-buy-response.json',
    )
    expect(created.media_buy_status).toBe('active')
    const read = await mcpOk(
      second,
      BUYER_TOKEN,
      'get_media_buys',
      { media_buy_ids: [created.media_buy_id] },
      'media-buy/get-media-buys-response.json',
    )
    expect(read.media_buys[0]).toMatchObject({ status: 'active', context: { on: 'first' } })
    const paused = await mcpOk(
      second,
      BUYER_TOKEN,
      'update_media_buy',
      { idempotency_key: newKey(), account: ACCOUNT, media_buy_id: created.media_buy_id, paused: true },
      'media-buy/update-media-buy-response.json',
    )
    expect(paused.media_buy_status).toBe('paused')
    await mcpOk(
      first,
      BUYER_TOKEN,
      'update_media_buy',
      { idempotency_key: newKey(), account: ACCOUNT, media_buy_id: created.media_buy_id, canceled: true },
      'media-buy/update-media-buy-response.json',
    )
    await mcpFails(
      second,
      BUYER_TOKEN,
      'update_media_buy',
      { idempotency_key: newKey(), account: ACCOUNT, media_buy_id: created.media_buy_id, canceled: true },
      'NOT_CANCELLABLE',
    )
  })

  it('share idempotency: a key used on one instance replays on the other', async () => {
    const request = buyRequest()
    const created = await mcpOk(
      first,
      BUYER_TOKEN,
      'create_media_buy',
      request,
      'media-buy/create-media-buy-response.json',
    )
    const replayed = await mcpOk(
      second,
      BUYER_TOKEN,
      'create_media_buy',
      request,
      'media-buy/create-media-buy-response.json',
    )
    expect(replayed).toMatchObject({ media_buy_id: created.media_buy_id, replayed: true })
    await mcpFails(
      second,
      BUYER_TOKEN,
      'create_media_buy',
      { ...request, po_number: 'changed' },
      'IDEMPOTENCY_CONFLICT',
    )
  })

  it('keep every change when both update one buy at once', async () => {
    const created = await mcpOk(
      first,
      BUYER_TOKEN,
      'create_media_buy',
      { ...buyRequest(), packages: [0, 1, 2, 3].map(() => ({ ...buyRequest().packages[0] })) },
      'media-buy/create-media-buy-response.json',
    )
    const ids: string[] = created.packages.map((pkg: { package_id: string }) => pkg.package_id)
    await Promise.all(
      ids.map((packageId, index) =>
        mcpOk(
          index % 2 === 0 ? first : second,
          BUYER_TOKEN,
          'update_media_buy',
          {
            idempotency_key: newKey(),
            account: ACCOUNT,
            media_buy_id: created.media_buy_id,
            packages: [{ package_id: packageId, budget: 6000 + index }],
          },
          'media-buy/update-media-buy-response.json',
        ),
      ),
    )
    const read = await mcpOk(
      second,
      BUYER_TOKEN,
      'get_media_buys',
      { media_buy_ids: [created.media_buy_id] },
      'media-buy/get-media-buys-response.json',
    )
    expect(read.media_buys[0].packages.map((pkg: { budget: number }) => pkg.budget)).toEqual([
      6000, 6001, 6002, 6003,
    ])
    expect(read.media_buys[0].total_budget).toBe(6000 + 6001 + 6002 + 6003)
  })
})
