/**
 * get_products (public, tiered by credentials) and list_creative_formats (public): the formats the catalog's
 * products reference, served from the creative agent's standard catalog (its agent_url) plus, in a sandbox
 * caller's sandbox, the formats it seeded through the test controller, with every 3.1 filter and pagination of the creative agent's own implementation.
 */
import { AgentError, type AnyTask } from '@adwire/agent-server'
import { FormatsError, listCreativeFormats, standardCatalog } from '@adwire/formats'
import { getProducts } from '../catalog/get-products.js'
import { UPSTREAM_KIND } from '../controller/scenarios.js'
import { requestSandbox } from '../accounts/resolve.js'
import type { Seller } from '../seller.js'
import { sellerTask, type DefineOptions } from './define.js'
import { MediaBuyListCreativeFormatsRequest } from './format-request-schema.js'

export const FORMAT_KIND = 'creative_format'

/**
 * @example
 * productTasks(seller, { allowInsecureWebhookUrls: false })
 */
export function productTasks(seller: Seller, options: DefineOptions): AnyTask[] {
  const products = sellerTask(
    {
      name: 'get_products',
      description:
        'Finds products for a brief (or the wholesale feed): display, video, audio and CTV from five publishers. Anonymous callers see standard products without prices; callers with products:read see every product with its pricing options; a sandbox caller also sees the products it seeded.',
      request: 'media-buy/get-products-request.json',
      access: 'public',
      handler: async (request, context) => {
        const sandbox = await requestSandbox(seller, context.principal?.principal_id, request.account)
        const response = getProducts({
          request,
          // The priced catalog is for callers with products:read; others see what anonymous callers see.
          credentialed: context.principal?.permissions.products?.includes('read') === true,
          products: await seller.products.all(sandbox),
          sandbox: sandbox !== undefined,
        })
        const stale =
          sandbox === undefined
            ? undefined
            : await seller.records.get<{ upstream: string; since: number; until?: number }>(
                UPSTREAM_KIND,
                `${sandbox}/get_products`,
              )
        if (!stale || (stale.body.until !== undefined && stale.body.until <= seller.now())) return response
        // Without a duration the outage answers the next get_products from the cache once, then the upstream is
        // back: the storyboard that forced it checks a healthy answer next, and later storyboards of the same
        // caller are not served stale.
        if (stale.body.until === undefined)
          await seller.records.delete(UPSTREAM_KIND, `${sandbox}/get_products`)
        // The advisory rides in the payload's errors[]; the transport stays a success.
        return {
          ...response,
          errors: [
            {
              code: 'STALE_RESPONSE',
              message: `${stale.body.upstream} is unreachable; these products come from the last good answer`,
              recovery: 'transient',
              details: {
                served_from_cache: true,
                cache_age_seconds: Math.max(0, Math.floor(seller.now() - stale.body.since)),
                upstream: { name: stale.body.upstream },
              },
            },
          ],
        }
      },
    },
    options,
  )

  const formats = sellerTask(
    {
      name: 'list_creative_formats',
      description:
        "Lists the creative formats this seller's products accept (the creative agent's standard formats and any seeded ones), with every 3.1 filter and cursor pagination.",
      request: 'media-buy/list-creative-formats-request.json',
      requestSchema: MediaBuyListCreativeFormatsRequest,
      access: 'public',
      handler: async (request, context) => {
        // Formats a sandbox caller seeded are listed in its sandbox only.
        const sandbox = await requestSandbox(seller, context.principal?.principal_id, request.account)
        const seeded =
          sandbox === undefined
            ? []
            : await seller.records.list<{ format: Record<string, unknown> }>(FORMAT_KIND, { owner: sandbox })
        const standard = standardCatalog(seller.env.creativeAgentUrl)
        const catalog =
          seeded.length > 0 ? standard.with(seeded.map((entry) => entry.body.format) as never) : standard
        try {
          const { context: _echo, ...input } = request
          return await listCreativeFormats(input, {
            agentUrl: seller.env.creativeAgentUrl,
            catalog,
          })
        } catch (error) {
          if (FormatsError.is(error))
            throw new AgentError(error.code, error.message, {
              ...(error.field !== undefined ? { field: error.field } : {}),
              ...(error.details !== undefined ? { details: error.details } : {}),
              status: error.status,
              recovery: error.recovery,
              cause: error,
            })
          throw error
        }
      },
    },
    options,
  )
  return [products, formats]
}
