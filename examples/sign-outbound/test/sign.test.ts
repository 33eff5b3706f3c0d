import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { jwksResolver, MemoryReplayStore, verifyRequest, type Jwks } from '@adwire/http-signatures'
import { runExample, startExample } from '@adwire/example-kit'
import { afterAll, expect, it } from 'vitest'

const dir = fileURLToPath(new URL('..', import.meta.url))
const receiverDir = fileURLToPath(new URL('../../node-http', import.meta.url))
const work = mkdtempSync(path.join(tmpdir(), 'adwire-sign-outbound-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

it('signs a webhook the node-http example accepts and a request the seller-side verifier accepts', async () => {
  const keysDir = path.join(work, 'keys')
  const first = await runExample(dir, { KEYS_DIR: keysDir })
  expect(first.code, first.stderr).toBe(0)
  const jwksFile = path.join(keysDir, 'public-jwks.json')
  const jwks = JSON.parse(readFileSync(jwksFile, 'utf8')) as Jwks
  expect(jwks.keys.map((key) => [key.adcp_use, 'd' in key])).toEqual([
    ['webhook-signing', false],
    ['request-signing', false],
  ])

  // The buyer's webhook endpoint: the node-http example, trusting the public JWKS the script wrote.
  const receiver = await startExample(receiverDir, { JWKS_FILE: jwksFile, DATA_DIR: path.join(work, 'data') })
  // The seller's endpoint: verifies the request profile with @adwire/http-signatures.
  const replayStore = new MemoryReplayStore()
  const seller = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', async () => {
      try {
        const result = await verifyRequest(
          {
            method: req.method!,
            url: `http://${req.headers.host}${req.url}`,
            headers: req.headers as Record<string, string>,
            body: new Uint8Array(Buffer.concat(chunks)),
          },
          { keys: jwksResolver(jwks), profile: '3.2', replayStore },
        )
        res.end(JSON.stringify({ status: result.status, keyid: 'keyid' in result ? result.keyid : null }))
      } catch (error) {
        res.statusCode = 401
        res.end(JSON.stringify({ error: (error as { code?: string }).code }))
      }
    })
  })
  await new Promise<void>((resolve) => seller.listen(0, '127.0.0.1', resolve))
  try {
    const sent = await runExample(dir, {
      KEYS_DIR: keysDir,
      WEBHOOK_URL: `${receiver.origin}/webhooks/adcp`,
      REQUEST_URL: `http://127.0.0.1:${(seller.address() as AddressInfo).port}/adcp/get_products`,
    })
    expect(sent.code, sent.stderr).toBe(0)
    expect(sent.lines).toContain('webhook 200 {"status":"accepted"}')
    const requestKid = jwks.keys[1]!.kid
    expect(sent.lines).toContain(`request 200 {"status":"verified","keyid":"${requestKid}"}`)
    expect(receiver.lines.filter((line) => line.includes('"published"'))).toHaveLength(1)
  } finally {
    seller.close()
    await receiver.stop()
  }
}, 120_000)
