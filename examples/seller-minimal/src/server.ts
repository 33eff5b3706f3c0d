/**
 * A minimal AdCP seller: the in-memory ad server of ad-server.ts sold through @adwire/seller, served on
 * 127.0.0.1 with @hono/node-server. MCP at /mcp, A2A at /a2a, the agent card, brand.json, the JWKS, /health.
 *
 * PORT (default 4600), DATA_DIR (the SQLite file's folder; default a folder in the system's temp dir),
 * PUBLIC_URL (default http://127.0.0.1:PORT), CREATIVE_AGENT_URL, REVIEW_SECONDS (default 2). Test only: COMPLY_TEST_CONTROLLER=1,
 * TEST_KIT_CREDENTIALS=1, ALLOW_INSECURE_WEBHOOK_URLS=1.
 */
import { mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { serve } from '@hono/node-server'
import { openSeller, type SellerRuntime } from '@adwire/seller'
import { catalog, delivery, platform } from './ad-server.js'

const env = process.env
const flag = (name: string) => env[name] === '1' || env[name] === 'true'
const dataDir = env.DATA_DIR ?? path.join(tmpdir(), 'adwire-seller-minimal')
const creativeAgentUrl = env.CREATIVE_AGENT_URL ?? 'http://127.0.0.1:4200'
mkdirSync(dataDir, { recursive: true })

let seller: SellerRuntime | undefined
// Until the seller is open (it needs the URL, which needs the port), every request is asked to come back.
const starting = () => new Response(null, { status: 503, headers: { 'retry-after': '1' } })

const server = serve(
  {
    fetch: (request) => seller?.fetch(request) ?? starting(),
    port: Number(env.PORT ?? 4600),
    hostname: '127.0.0.1',
  },
  (info) =>
    void open(`http://127.0.0.1:${info.port}`).catch((error: unknown) => {
      console.error(error)
      process.exit(1)
    }),
)

async function open(url: string) {
  seller = await openSeller({
    settings: {
      creativeAgentUrl,
      buyReview: 'over_budget', // buys above 100,000 wait for the seller's review (2 s here)
      reviewBudgetThreshold: 100_000,
      reviewSeconds: Number(env.REVIEW_SECONDS ?? 2),
      creativeReview: 'auto',
      complyTestController: flag('COMPLY_TEST_CONTROLLER'),
      sandboxPrincipals: [],
      allowInsecureWebhookUrls: flag('ALLOW_INSECURE_WEBHOOK_URLS'),
    },
    catalog: catalog(creativeAgentUrl),
    delivery,
    platform,
    database: { kind: 'sqlite', path: path.join(dataDir, 'seller.sqlite') },
    publicUrl: env.PUBLIC_URL ?? url,
    testKitCredentials: flag('TEST_KIT_CREDENTIALS'),
    identity: {
      name: 'seller-minimal',
      brand: {
        type: 'sales',
        id: 'seller_minimal',
        description: 'A minimal AdCP seller',
        name: 'the minimal seller',
      },
    },
    log: (entry) => console.error(JSON.stringify(entry)),
  })
  await seller.start() // sweeps, the seller's clock, due reviews
  if (seller.tokens.generated) console.log(`bearer token (printed once): ${seller.tokens.generated}`)
  console.log(`listening on ${url} (MCP ${url}/mcp, A2A ${url}/a2a, data in ${dataDir})`)
}

// Stop accepting, let the seller finish its background work and close its database, then exit.
const stop = () => {
  server.close()
  void Promise.resolve(seller?.close()).finally(() => process.exit(0))
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
