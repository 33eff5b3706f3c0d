/**
 * The core seller steps over A2A with the official A2A client (a 1.0 SendMessage with the AdCP extension):
 * get_products, create_media_buy and get_media_buys answer in the task's artifact DataPart, valid against the
 * official schemas, with context echoed and the create request's context kept on the buy.
 */
import { describe, expect, it } from 'vitest'
import {
  KIT_SANDBOX,
  a2aSend,
  artifactData,
  expectOfficial,
  newKey,
  startTestAgent,
  type Body,
} from './test-support.js'

const account = { brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle-agency.example' }

describe('media_buy_seller over A2A', () => {
  it('answers get_products, create_media_buy and get_media_buys in the artifact DataPart', async () => {
    const local = await startTestAgent()
    try {
      const send = async (skill: string, input: Body, schema: string) => {
        const data = artifactData(await a2aSend(local, KIT_SANDBOX, skill, input))
        expectOfficial(schema, data)
        return data
      }
      const products = await send(
        'get_products',
        { buying_mode: 'brief', brief: 'sports video' },
        'media-buy/get-products-response.json',
      )
      const product = products.products[0]
      const created = await send(
        'create_media_buy',
        {
          account: { ...account, sandbox: true },
          brand: { domain: 'acmeoutdoor.example' },
          start_time: 'asap',
          end_time: '2099-06-30T23:59:59Z',
          packages: [
            {
              product_id: product.product_id,
              pricing_option_id: product.pricing_options[0].pricing_option_id,
              budget: 20000,
            },
          ],
          idempotency_key: newKey(),
          context: { via: 'a2a' },
        },
        'media-buy/create-media-buy-response.json',
      )
      expect(created.context).toEqual({ via: 'a2a' })
      const read = await send(
        'get_media_buys',
        { media_buy_ids: [created.media_buy_id] },
        'media-buy/get-media-buys-response.json',
      )
      expect(read.media_buys[0].context).toEqual({ via: 'a2a' })
    } finally {
      await local.close()
    }
  })
})
