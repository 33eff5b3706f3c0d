import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateSigningKey } from './keygen.js'
import { createSafeFetch } from './keys/safe-fetch.js'
import { signWebhook } from './webhook.js'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
type OnWebhook = (request: Request) => Promise<Response>

/**
 * The README's receiver snippet as a module: its JWKS URL points at `jwksUrl` (fetched over http on 127.0.0.1)
 * and it imports this package's source.
 */
async function readmeReceiver(jwksUrl: string): Promise<OnWebhook> {
  const snippet = /^```js\n\/\/ receiver\.mjs\n([\s\S]*?)^```$/m.exec(readme)?.[1]
  expect(snippet, 'the README has a receiver.mjs snippet').toBeDefined()
  const url = "remoteJwksResolver({ url: 'https://seller.example/.well-known/jwks.json' })"
  expect(snippet).toContain(url)
  const source = snippet!
    .replace(url, 'remoteJwksResolver(globalThis.readmeJwksOptions)')
    .replace(
      "from '@adwire/http-signatures'",
      `from ${JSON.stringify(pathToFileURL(path.resolve(import.meta.dirname, 'index.ts')).href)}`,
    )
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'adwire-readme-')), 'receiver.mjs')
  writeFileSync(file, source)
  ;(globalThis as { readmeJwksOptions?: unknown }).readmeJwksOptions = {
    url: jwksUrl,
    fetch: createSafeFetch({ allowHttp: true, allowLoopback: true }),
  }
  return ((await import(/* @vite-ignore */ pathToFileURL(file).href)) as { onWebhook: OnWebhook }).onWebhook
}

describe('the README receiver snippet', () => {
  let jwksStatus = 503
  let jwks: unknown
  let server: Server
  let base: string
  beforeAll(async () => {
    server = createServer((_, response) => {
      response.writeHead(jwksStatus, { 'content-type': 'application/json' }).end(JSON.stringify(jwks ?? {}))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('answers 503 when the seller keys cannot be read (key_source_unavailable), 401 for a bad signature', async () => {
    const { privateJwk, jwks: published } = await generateSigningKey({ alg: 'ed25519', kid: 'seller-1' })
    const body = JSON.stringify({ task_id: 't1', status: 'completed', idempotency_key: crypto.randomUUID() })
    const signed = await signWebhook(
      {
        method: 'POST',
        url: 'https://buyer.example/webhooks/adcp',
        headers: { 'content-type': 'application/json' },
        body,
      },
      { key: privateJwk },
    )
    const request = () =>
      new Request(signed.url, { method: 'POST', headers: signed.headers, body: signed.body as string })

    // The error table: key_source_unavailable → "answer 503, the sender retries".
    expect(readme).toMatch(/^\| `key_source_unavailable` \|[^\n]*answer 503/m)
    const onWebhook = await readmeReceiver(`${base}/jwks.json`)
    const unavailable = await onWebhook(request())
    expect(unavailable.status).toBe(503)

    // With the keys readable, a tampered body is the signature's fault: 401 with WWW-Authenticate.
    jwksStatus = 200
    jwks = published
    const tampered = await readmeReceiver(`${base}/other.json`)
    const refused = await tampered(
      new Request(signed.url, { method: 'POST', headers: signed.headers, body: `${body} ` }),
    )
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toMatch(/webhook_signature/)
  })
})
