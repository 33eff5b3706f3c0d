/**
 * The agent host on real parts: tokens and signing keys kept in a settings table of a real SQLite file (two
 * connections to one file stand for two instances starting together), and the HTTP surface on a real HTTP
 * server on 127.0.0.1.
 */
import { mkdtempSync } from 'node:fs'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { serve } from '@hono/node-server'
import { openSqliteStores } from '@adwire/store-sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createAgentHttp,
  parsePermissions,
  parseTokenGrants,
  resolveSigningKeys,
  resolveTokens,
  type SettingsStore,
} from './index.js'

const DEFAULT = { principal_id: 'default-buyer', permissions: { creatives: ['read', 'write'] as const } }
const closers: (() => void)[] = []
afterAll(() => closers.forEach((close) => close()))

/** A settings table on the SQLite file at `path` (a connection of its own). */
function sqliteSettings(path: string): SettingsStore {
  const stores = openSqliteStores({ path })
  closers.push(() => stores.close())
  const db = stores.database
  db.exec('CREATE TABLE IF NOT EXISTS host_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)')
  const read = (name: string) =>
    (db.prepare('SELECT value FROM host_settings WHERE name = ?').get(name) as { value: string } | undefined)
      ?.value
  return {
    getSetting: async (name) => read(name),
    async putSettingIfAbsent(name, value) {
      db.prepare('INSERT INTO host_settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING').run(
        name,
        value,
      )
      return read(name)!
    },
  }
}

const tempFile = () => join(mkdtempSync(join(tmpdir(), 'adwire-host-')), 'host.sqlite')

describe('TOKENS', () => {
  it('reads principal:token:permissions over the given areas, read+write by default', () => {
    const parsed = parseTokenGrants(
      'buyer-1:tok_0123456789abcdef, reader:tok_fedcba9876543210:read+creatives.approve',
      ['creatives'],
    )
    expect(parsed.problems).toEqual([])
    expect(parsed.grants).toEqual([
      {
        token: 'tok_0123456789abcdef',
        principal: { principal_id: 'buyer-1', permissions: { creatives: ['read', 'write'] } },
      },
      {
        token: 'tok_fedcba9876543210',
        principal: { principal_id: 'reader', permissions: { creatives: ['read', 'approve'] } },
      },
    ])
    expect(parsePermissions('reports.read+media_buys.write', ['media_buys', 'reports'])).toEqual({
      reports: ['read'],
      media_buys: ['write'],
    })
    expect(parsePermissions('products.read', ['creatives'])).toBeUndefined()
  })

  it('names each bad entry without repeating its token', () => {
    const { grants, problems } = parseTokenGrants(
      'a:short,b c:tok_0123456789abcdef,d:tok_0123456789abcdef:fly,e:tok_0123456789abcdef,f:tok_0123456789abcdef,g',
      ['creatives'],
    )
    expect(grants.map((grant) => grant.principal.principal_id)).toEqual(['e'])
    expect(problems).toHaveLength(5)
    expect(problems[0]).toMatch(/^entry 1: the token must be/)
    expect(problems[1]).toMatch(/^entry 2: the principal id/)
    expect(problems[2]).toMatch(/^entry 3: permissions are/)
    expect(problems[3]).toMatch(/^entry 5: the same token is listed twice/)
    expect(problems[4]).toMatch(/^entry 6: expected principal_id:token/)
    expect(problems.join()).not.toContain('tok_0123456789abcdef')
  })
})

describe('bearer tokens', () => {
  it('generates one token at the first start, keeps only its digest, and accepts it after a restart', async () => {
    const path = tempFile()
    const first = await resolveTokens(sqliteSettings(path), [], { prefix: 'tst_', defaultPrincipal: DEFAULT })
    expect(first.source).toBe('generated')
    expect(first.generated).toMatch(/^tst_[\w-]{43}$/)
    const settings = sqliteSettings(path)
    expect(await settings.getSetting('default_token_sha256')).toMatch(/^[0-9a-f]{64}$/)
    const again = await resolveTokens(settings, [], { prefix: 'tst_', defaultPrincipal: DEFAULT })
    expect(again.source).toBe('database')
    expect(again.generated).toBeUndefined()
    expect(await again.lookup(first.generated!)).toEqual(DEFAULT)
    expect(await again.lookup('tst_another')).toBeUndefined()
  })

  it('two instances starting together on one file agree on one token', async () => {
    const path = tempFile()
    const [a, b] = await Promise.all(
      [sqliteSettings(path), sqliteSettings(path)].map((settings) =>
        resolveTokens(settings, [], { prefix: 'tst_', defaultPrincipal: DEFAULT }),
      ),
    )
    const token = (a!.generated ?? b!.generated)!
    expect([a!.generated, b!.generated].filter(Boolean)).toHaveLength(1)
    expect(await a!.lookup(token)).toEqual(DEFAULT)
    expect(await b!.lookup(token)).toEqual(DEFAULT)
  })

  it('uses TOKENS when set (nothing generated or stored), then the fallback', async () => {
    const settings = sqliteSettings(tempFile())
    const { grants } = parseTokenGrants('buyer-1:tok_0123456789abcdef:read', ['creatives'])
    const kit = { principal_id: 'kit', permissions: {} }
    const tokens = await resolveTokens(settings, grants, {
      prefix: 'tst_',
      defaultPrincipal: DEFAULT,
      fallback: (token) => (token.startsWith('demo-') ? kit : undefined),
    })
    expect(tokens.source).toBe('env')
    expect(await tokens.lookup('tok_0123456789abcdef')).toEqual(grants[0]!.principal)
    expect(await tokens.lookup('demo-anything')).toEqual(kit)
    expect(await tokens.lookup('nope-0123456789abcdef')).toBeUndefined()
    expect(await settings.getSetting('default_token_sha256')).toBeUndefined()
  })
})

describe('signing keys', () => {
  it('generates the webhook and request keys once, keeps them, and publishes both', async () => {
    const path = tempFile()
    const options = { kidPrefix: 'test-agent', requestSigning: {} }
    const first = await resolveSigningKeys(sqliteSettings(path), options)
    expect(first.webhook).toMatchObject({
      source: 'generated',
      algorithm: 'ed25519',
      purpose: 'webhook-signing',
    })
    expect(first.webhook.publicJwk.kid).toMatch(/^test-agent-\d{4}-\d\d-\d\d-[0-9a-f]{8}$/)
    expect(first.request!.publicJwk.kid).toMatch(/^test-agent-requests-/)
    expect(first.jwks.keys.map((key) => [key.kid, key.adcp_use])).toEqual([
      [first.webhook.publicJwk.kid, 'webhook-signing'],
      [first.request!.publicJwk.kid, 'request-signing'],
    ])
    expect(JSON.stringify(first.jwks)).not.toContain('"d"')
    const again = await resolveSigningKeys(sqliteSettings(path), options)
    expect(again.webhook.source).toBe('database')
    expect(again.jwks).toEqual(first.jwks)
  })

  it('takes a key from the environment, and only the webhook key unless asked', async () => {
    const settings = sqliteSettings(tempFile())
    const generated = await resolveSigningKeys(settings, { kidPrefix: 'elsewhere' })
    const keys = await resolveSigningKeys(sqliteSettings(tempFile()), {
      kidPrefix: 'test-agent',
      webhookJwk: { ...generated.webhook.privateJwk, kid: 'from-env' },
    })
    expect(keys.webhook).toMatchObject({ source: 'env', publicJwk: { kid: 'from-env' } })
    expect(keys.request).toBeUndefined()
    expect(keys.jwks.keys).toHaveLength(1)
    await expect(
      resolveSigningKeys(settings, { kidPrefix: 'x', webhookJwk: { kty: 'oct', k: 'abc', kid: 'k' } }),
    ).rejects.toThrow(/not an Ed25519 or P-256 private JWK/)
  })
})

describe('the HTTP surface', () => {
  let server: Server
  let origin: string
  const logged: Record<string, unknown>[] = []
  const seen: { url: string; body: string }[] = []
  let healthy = true

  beforeAll(async () => {
    const http = createAgentHttp({
      publicUrl: 'https://agent.example/prefix',
      brand: { type: 'sales', id: 'test_agent', description: 'a test agent', name: 'the test agent' },
      jwks: { keys: [{ kid: 'k1' }] },
      agent: {
        async fetch(request) {
          if (request.headers.get('x-fail')) throw new Error('secret detail')
          seen.push({ url: request.url, body: await request.text() })
          return Response.json({ ok: true })
        },
      },
      health: {
        kind: 'sqlite',
        ping: async () => {
          if (!healthy) throw new Error('down')
        },
      },
      routes: (request) =>
        new URL(request.url).pathname === '/own' ? new Response('mine', { status: 201 }) : undefined,
      maxBodyBytes: 1000,
      log: (entry) => logged.push(entry),
    })
    server = await new Promise<Server>((resolve) => {
      const started = serve({ fetch: http.fetch, port: 0, hostname: '127.0.0.1' }, () =>
        resolve(started as Server),
      ) as Server
    })
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise((resolve) => server.close(resolve)))

  it('serves brand.json and the JWKS under the public URL, cached five minutes', async () => {
    const brand = await fetch(`${origin}/.well-known/brand.json`)
    expect(brand.headers.get('cache-control')).toBe('public, max-age=300')
    expect(await brand.json()).toMatchObject({
      version: '1.0',
      agents: [
        { type: 'sales', url: 'https://agent.example/prefix', id: 'test_agent', description: 'a test agent' },
        {
          url: 'https://agent.example/prefix/mcp',
          id: 'test_agent_mcp',
          description: 'the test agent over MCP (streamable HTTP)',
          jwks_uri: 'https://agent.example/prefix/.well-known/jwks.json',
        },
        { url: 'https://agent.example/prefix/a2a', id: 'test_agent_a2a' },
      ],
    })
    expect(await (await fetch(`${origin}/.well-known/jwks.json`)).json()).toEqual({ keys: [{ kid: 'k1' }] })
  })

  it('hands the task server its requests under the public URL, bodies intact', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    const answer = await fetch(`${origin}/mcp?x=1`, { method: 'POST', body })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff')
    expect(answer.headers.get('referrer-policy')).toBe('no-referrer')
    expect(seen.at(-1)).toEqual({ url: 'https://agent.example/prefix/mcp?x=1', body })
    await fetch(`${origin}/a2a/.well-known/agent-card.json`)
    expect(seen.at(-1)!.url).toBe('https://agent.example/prefix/a2a/.well-known/agent-card.json')
  })

  it('refuses a body over the cap with 413, declared or chunked', async () => {
    const declared = await fetch(`${origin}/a2a`, { method: 'POST', body: 'x'.repeat(1001) })
    const chunks = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 3; i++) controller.enqueue(new TextEncoder().encode('y'.repeat(400)))
        controller.close()
      },
    })
    const chunked = await fetch(`${origin}/mcp`, {
      method: 'POST',
      body: chunks,
      duplex: 'half',
    } as RequestInit)
    for (const answer of [declared, chunked]) {
      expect(answer.status).toBe(413)
      expect(await answer.json()).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, data: { adcp_error: { code: 'INVALID_REQUEST' } } },
      })
    }
    const small = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"small":true}'))
        controller.close()
      },
    })
    await fetch(`${origin}/mcp`, { method: 'POST', body: small, duplex: 'half' } as RequestInit)
    expect(seen.at(-1)!.body).toBe('{"small":true}')
  })

  it('reports health from the database', async () => {
    const ok = await fetch(`${origin}/health`)
    expect([ok.status, await ok.json()]).toEqual([200, { status: 'ok', database: 'sqlite' }])
    healthy = false
    const down = await fetch(`${origin}/health`)
    healthy = true
    expect([down.status, await down.json()]).toEqual([503, { status: 'unavailable', database: 'sqlite' }])
  })

  it("serves the app's routes, and one error body for unknown routes and failures", async () => {
    const own = await fetch(`${origin}/own`)
    expect([own.status, await own.text()]).toEqual([201, 'mine'])
    const missing = await fetch(`${origin}/nope`)
    expect(missing.status).toBe(404)
    expect(missing.headers.get('cache-control')).toBe('no-store')
    expect(await missing.json()).toMatchObject({ adcp_error: { code: 'REFERENCE_NOT_FOUND' } })
    const failed = await fetch(`${origin}/mcp`, { method: 'POST', headers: { 'x-fail': '1' }, body: '{}' })
    expect(failed.status).toBe(500)
    const text = await failed.text()
    expect(JSON.parse(text)).toMatchObject({ adcp_error: { code: 'INTERNAL_ERROR', recovery: 'terminal' } })
    expect(text).not.toContain('secret')
    expect(logged).toContainEqual({ error: 'unhandled', path: '/mcp', message: 'secret detail' })
  })
})
