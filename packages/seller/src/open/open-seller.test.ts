/**
 * openSeller on a real SQLite file: the host's routes through `fetch`, the generated token and key kept across
 * a reopen, the periodic work as functions and as timers, and a Storage the caller opened left open by close().
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openStorage } from '../storage/index.js'
import { homepageCatalog, testSettings } from '../testing/fixtures.js'
import { openSeller } from './open-seller.js'
import type { OpenSellerOptions } from './types.js'

const dir = mkdtempSync(join(tmpdir(), 'adwire-open-seller-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const settings = testSettings()
const catalog = homepageCatalog(['daily', 'hourly'])
const options = (database: OpenSellerOptions['database']): OpenSellerOptions => ({
  settings,
  catalog,
  delivery: () => [],
  database,
  publicUrl: 'https://seller.example',
  identity: {
    brand: { type: 'sales', id: 'test_seller', description: 'a test seller', name: 'the test seller' },
  },
})
const get = (seller: { fetch(request: Request): Promise<Response> }, path: string) =>
  seller.fetch(new Request(`http://127.0.0.1${path}`))

describe('openSeller', () => {
  const path = join(dir, 'seller.sqlite')

  it('serves the host routes, generates a token and a key once, and runs its work', async () => {
    const seller = await openSeller(options({ kind: 'sqlite', path }))
    const kid = seller.key.publicJwk.kid
    try {
      expect(await (await get(seller, '/health')).json()).toEqual({ status: 'ok', database: 'sqlite' })
      const brand = (await (await get(seller, '/.well-known/brand.json')).json()) as {
        agents: { id: string; url: string }[]
      }
      expect(brand.agents.map(({ id, url }) => [id, url])).toEqual([
        ['test_seller', 'https://seller.example'],
        ['test_seller_mcp', 'https://seller.example/mcp'],
        ['test_seller_a2a', 'https://seller.example/a2a'],
      ])
      const jwks = (await (await get(seller, '/.well-known/jwks.json')).json()) as { keys: { kid: string }[] }
      expect(jwks.keys.map(({ kid }) => kid)).toEqual([seller.key.publicJwk.kid])
      expect(seller.key.publicJwk.kid).toMatch(/^seller-/)
      const unknown = await get(seller, '/nowhere')
      expect(unknown.status).toBe(404)
      expect(((await unknown.json()) as { adcp_error: { code: string } }).adcp_error.code).toBe(
        'REFERENCE_NOT_FOUND',
      )
      expect(seller.tokens.source).toBe('generated')
      expect(await seller.tokens.lookup(seller.tokens.generated!)).toMatchObject({
        principal_id: 'default-buyer',
      })
      expect(await seller.tick()).toBe(0)
      expect(await seller.due()).toBe(0)
      await seller.sweep()
      expect(await seller.announce()).toBe(true)
      expect(await seller.announce()).toBe(false)
      await seller.start({ sweepMs: 5, tickMs: 5, dueMs: 5 })
      await expect(seller.start()).rejects.toThrow(/started or closed/)
      await new Promise((resolve) => setTimeout(resolve, 30))
    } finally {
      await seller.close()
    }
    const again = await openSeller(options({ kind: 'sqlite', path }))
    try {
      expect(again.tokens.source).toBe('database')
      expect(again.key.source).toBe('database')
      expect(again.key.publicJwk.kid).toBe(kid)
    } finally {
      await again.close()
    }
  })

  it('takes bearer grants or a lookup of its own, and leaves a Storage it was given open', async () => {
    const storage = await openStorage({ kind: 'sqlite', path: join(dir, 'given.sqlite') })
    const principal = { principal_id: 'buyer-1', permissions: { products: ['read' as const] } }
    const granted = await openSeller({
      ...options(storage),
      tokens: [{ token: 'tok_0123456789abcdef', principal }],
    })
    expect(granted.tokens.source).toBe('env')
    expect(await granted.tokens.lookup('tok_0123456789abcdef')).toEqual(principal)
    expect(await granted.tokens.lookup('tok_fedcba9876543210')).toBeUndefined()
    await granted.close()
    await storage.ping()
    const looked = await openSeller({
      ...options(storage),
      tokens: (token) => (token === 'mine' ? principal : undefined),
    })
    expect(await looked.tokens.lookup('mine')).toEqual(principal)
    await looked.close()
    await storage.ping()
    await storage.close()
  })
})
