// Run by scripts/pack-check.mjs in a fresh project where the packed tarballs are installed (nothing else of the
// workspace there): the seller, installed alone, opens on a SQLite file, accepts the official test-kit keys and
// checks requests against the official 3.1.19 schemas, both read from the files of @adwire/adcp-data.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { openSeller } from '@adwire/seller'

const url = 'http://127.0.0.1:4600'
const dir = mkdtempSync(path.join(tmpdir(), 'adwire-seller-installed-'))
const seller = await openSeller({
  settings: {
    creativeAgentUrl: 'https://creative.example',
    buyReview: 'none',
    reviewBudgetThreshold: 0,
    reviewSeconds: 0,
    creativeReview: 'auto',
    complyTestController: false,
    sandboxPrincipals: [],
    allowInsecureWebhookUrls: false,
  },
  catalog: [],
  delivery: () => [],
  database: { kind: 'sqlite', path: path.join(dir, 'seller.sqlite') },
  publicUrl: url,
  testKitCredentials: true,
  tokens: [
    { token: 'installed-check-token-0123456789', principal: { principal_id: 'buyer', permissions: {} } },
  ],
})

/** One MCP tools/call; the HTTP status and the tool's text. */
async function call(name, args, token) {
  const response = await seller.fetch(
    new Request(`${url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name, arguments: args },
      }),
    }),
  )
  const body = await response.text()
  return { status: response.status, text: body }
}

const problems = []
const invalid = await call('get_products', { buying_mode: 'nonsense' }, 'installed-check-token-0123456789')
if (!/INVALID_REQUEST/.test(invalid.text) || !/buying_mode/.test(invalid.text))
  problems.push(
    `an invalid get_products was not refused by the official schema: ${invalid.text.slice(0, 300)}`,
  )
const kit = await call('list_accounts', {}, 'demo-acme-outdoor-v1')
if (kit.status !== 200 || /AUTH_|"isError":true/.test(kit.text))
  problems.push(`the test-kit key was not accepted: ${kit.status} ${kit.text.slice(0, 300)}`)
const stranger = await call('list_accounts', {}, 'demo-nobody-v1')
if (stranger.status !== 401) problems.push(`an unknown key was answered ${stranger.status}, not 401`)

await seller.close()
rmSync(dir, { recursive: true, force: true })
if (problems.length > 0) {
  for (const problem of problems) console.error(problem)
  process.exit(1)
}
console.log(
  '@adwire/seller: opens on SQLite, takes the test-kit keys, checks requests against the official schemas',
)
