/**
 * The core seller steps over A2A with the official A2A client (a 1.0 SendMessage with the AdCP extension):
 * get_products, create_media_buy and get_media_buys answer in the task's artifact DataPart, valid against the
 * official schemas, with context echoed and the create request's context kept on the buy. A seller's error is
 * a failed task whose DataPart is the body MCP answers, for 1.0 and for the 0.3 client the field's buyers use.
 */
import { Role, TaskState, type Task } from '@a2a-js/sdk'
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  type Client as A2AClient,
} from '@a2a-js/sdk/client'
import { describe, expect, it } from 'vitest'
import {
  KIT_SANDBOX,
  a2aSend,
  artifactData,
  expectOfficial,
  mcpCall,
  newKey,
  sameLoopFetch,
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

/** A 0.3 client of the official A2A SDK, as the field's AdCP buyers speak it (it reads only the 0.3 card fields). */
async function legacyClient(agent: { url: string }, token: string): Promise<A2AClient> {
  const card = (await (await fetch(`${agent.url}/.well-known/agent-card.json`)).json()) as Body
  const { supportedInterfaces: _interfaces, securityRequirements: _requirements, ...legacyView } = card
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers)
    headers.set('authorization', `Bearer ${token}`)
    return sameLoopFetch(input, { ...init, headers })
  }
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
      cardResolver: new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }),
    }),
  )
  const client = await factory.createFromAgentCard(legacyView as never)
  expect(client.protocolVersion).toMatch(/^0\.3/)
  return client
}

/** One `{skill, parameters}` DataPart (the field's 0.3 form) through the 0.3 client; the A2A task. */
async function legacySend(client: A2AClient, skill: string, parameters: Body): Promise<Task> {
  const result = await client.sendMessage({
    tenant: '',
    message: {
      messageId: crypto.randomUUID(),
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: [
        {
          content: { $case: 'data', value: { skill, parameters } },
          metadata: undefined,
          filename: '',
          mediaType: '',
        },
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  })
  expect('status' in result).toBe(true)
  return result as Task
}

describe('a seller error over A2A', () => {
  const context = { correlation_id: 'a2a-error' }
  const cases: [string, string, () => Body, string][] = [
    [
      'an update of a buy that does not exist',
      'update_media_buy',
      () => ({
        idempotency_key: newKey(),
        account: { ...account, sandbox: true },
        media_buy_id: 'mb_does_not_exist',
        paused: true,
        context,
      }),
      'MEDIA_BUY_NOT_FOUND',
    ],
    [
      'a buy whose flight ends before it starts',
      'create_media_buy',
      () => ({
        idempotency_key: newKey(),
        account: { ...account, sandbox: true },
        brand: { domain: 'acmeoutdoor.example' },
        start_time: '2099-12-31T00:00:00Z',
        end_time: '2099-01-01T00:00:00Z',
        packages: [
          { product_id: 'trailhead_lifestyle_display', pricing_option_id: 'cpm_standard', budget: 5000 },
        ],
        context,
      }),
      'VALIDATION_ERROR',
    ],
  ]

  // transport-errors.mdx (A2A binding) and error-code.json: a task that cannot produce a success artifact flips
  // the transport's failure marker (MCP isError, A2A failed), the AdCP error in the artifact DataPart.
  it.each(cases)(
    'answers %s with a failed task carrying the MCP body (1.0 and 0.3)',
    async (_name, skill, request, code) => {
      const local = await startTestAgent()
      try {
        const mcp = await mcpCall(local, KIT_SANDBOX, skill, request())
        expect(mcp.isError).toBe(true)
        const body = mcp.structuredContent
        expect(body).toMatchObject({ status: 'failed', adcp_error: { code }, context })
        expect(body.errors).toEqual([body.adcp_error])
        const legacy = await legacyClient(local, KIT_SANDBOX)
        const tasks = [
          await a2aSend(local, KIT_SANDBOX, skill, request()),
          await legacySend(legacy, skill, request()),
        ]
        for (const task of tasks) {
          expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED)
          expect(artifactData(task)).toEqual(body)
          expect(task.status?.message?.parts[0]?.content?.value).toEqual(body)
        }
      } finally {
        await local.close()
      }
    },
  )
})
