/**
 * Agent credentials on SQLite and PostgreSQL over real HTTP: bearer tokens (`connect`) and OAuth client
 * credentials saved sealed (AES-256-GCM; the database file holds no secret in plain text), field-by-field
 * validation with the document's codes, the auth status, the `AgentCredentialSource` the runs side reads, and a
 * real client-credentials exchange against a small OAuth token endpoint on 127.0.0.1 that succeeds and fails
 * (oauth, malformed, network).
 */
import { existsSync, readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import pg from 'pg'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { controllerCredentials } from '../auth/authorize.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { api, type Backend } from '../testing/registry.js'
import {
  startStatusRegistry,
  statusDatabase,
  type StatusDatabase,
  type StatusRegistry,
} from './status-testing.js'

const postgresUrl = await resolveTestPostgresUrl()
const backends: Array<[string, Backend | undefined]> = [
  ['sqlite', { kind: 'sqlite' }],
  ['postgres', postgresUrl ? { kind: 'postgres', url: postgresUrl } : undefined],
]

const BEARER = 'bearer-token-PLAIN-7f3a91'
const CLIENT_ID = 'registry-client-1'
const SECRET = 's3cr3t-value-Q8zK2'

interface TokenRequest {
  path: string
  authorization: string | undefined
  form: URLSearchParams
}

/** A minimal OAuth 2.0 token endpoint (RFC 6749 §4.4) on 127.0.0.1: `/token` checks the client, `/malformed` answers 200 `{}`. */
async function startTokenServer(): Promise<{ origin: string; seen: TokenRequest[]; close(): Promise<void> }> {
  const seen: TokenRequest[] = []
  const read = (request: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let body = ''
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')))
      request.on('end', () => resolve(body))
    })
  const server: Server = createServer(async (request, response) => {
    const form = new URLSearchParams(await read(request))
    const path = (request.url ?? '/').split('?')[0]!
    seen.push({ path, authorization: request.headers.authorization, form })
    const json = (status: number, body: unknown) =>
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    if (path === '/malformed') return json(200, { hello: 'world' })
    if (request.method !== 'POST' || form.get('grant_type') !== 'client_credentials') {
      return json(400, { error: 'unsupported_grant_type' })
    }
    let id = form.get('client_id')
    let secret = form.get('client_secret')
    const basic = /^Basic (.+)$/.exec(request.headers.authorization ?? '')
    if (basic) {
      const [user, pass] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':')
      id = decodeURIComponent(user!.replaceAll('+', ' '))
      secret = decodeURIComponent(pass!.replaceAll('+', ' '))
    }
    if (id !== CLIENT_ID || secret !== SECRET) {
      return json(401, { error: 'invalid_client', error_description: 'client authentication failed' })
    }
    return json(200, { access_token: 'at-123', token_type: 'Bearer', expires_in: 3600 })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

describe.each(backends)('agent credentials on %s', (name, backend) => {
  let database: StatusDatabase
  let running: StatusRegistry
  let tokens: Awaited<ReturnType<typeof startTokenServer>>
  let owner: string
  let stranger: string
  const agentUrl = 'https://secured-agent.example/mcp'
  const path = `/api/registry/agents/${encodeURIComponent(agentUrl)}`
  const registry = () => running.registry
  const save = (body: unknown, token = owner) =>
    api(registry(), 'saveAgentOAuthClientCredentials', `${path}/oauth-client-credentials`, {
      method: 'PUT',
      token,
      body,
    })
  const exchange = (token = owner, at = path) =>
    api(registry(), 'testAgentOAuthClientCredentials', `${at}/oauth-client-credentials/test`, {
      method: 'POST',
      token,
    })

  beforeAll(async () => {
    if (!backend) return
    database = statusDatabase(backend)
    running = await startStatusRegistry(database)
    tokens = await startTokenServer()
    owner = (await registry().createOrg('Owner')).apiKey
    stranger = (await registry().createOrg('Stranger')).apiKey
    await api(registry(), 'registerMemberAgent', '/api/me/agents', {
      token: owner,
      body: { url: agentUrl, type: 'sales' },
    })
  })

  afterAll(async () => {
    await running?.registry.close()
    await tokens?.close()
    await database?.cleanup()
  })

  it.skipIf(!backend)('stores a bearer token for the owner and reports the auth status', async () => {
    expect((await api(registry(), 'getAgentAuthStatus', `${path}/auth-status`)).status).toBe(401)
    const empty = await api(registry(), 'getAgentAuthStatus', `${path}/auth-status`, { token: owner })
    expect(empty.body).toEqual({
      has_auth: false,
      agent_context_id: null,
      auth_type: null,
      has_oauth_token: false,
      has_valid_oauth: false,
      oauth_token_expires_at: null,
      has_oauth_client_credentials: false,
    })
    expect(
      (await api(registry(), 'getAgentAuthStatus', `${path}/auth-status?org=someone-else`, { token: owner }))
        .status,
    ).toBe(400)
    const connect = (body: unknown, token = owner) =>
      api(registry(), 'connectAgent', `${path}/connect`, { method: 'PUT', token, body })
    expect((await connect({ auth_token: BEARER }, stranger)).status).toBe(403)
    expect((await connect({ auth_token: '' })).status).toBe(400)
    expect((await connect({ auth_token: BEARER, auth_type: 'digest' })).status).toBe(400)
    expect((await connect({ auth_token: 'x'.repeat(4097) })).status).toBe(400)
    const connected = await connect({ auth_token: BEARER })
    expect(connected.body).toMatchObject({ connected: true, has_auth: true })
    const status = await api(registry(), 'getAgentAuthStatus', `${path}/auth-status`, { token: owner })
    expect(status.body).toMatchObject({
      has_auth: true,
      auth_type: 'bearer',
      agent_context_id: connected.body.agent_context_id,
      has_oauth_client_credentials: false,
    })
    // Another organization sees its own (empty) context.
    expect(
      (await api(registry(), 'getAgentAuthStatus', `${path}/auth-status`, { token: stranger })).body.has_auth,
    ).toBe(false)
    expect(
      await controllerCredentials(
        registry().repository,
        registry().deps.compliance!.credentials!,
      ).credentialFor(agentUrl),
    ).toEqual({
      type: 'bearer',
      token: BEARER,
    })
  })

  it.skipIf(!backend)('validates client credentials field by field', async () => {
    const valid = { token_endpoint: `${tokens.origin}/token`, client_id: CLIENT_ID, client_secret: SECRET }
    const cases: Array<[unknown, string, string]> = [
      [{ ...valid, client_secret: undefined }, 'missing_field', 'client_secret'],
      [{ ...valid, token_endpoint: 'ftp://tokens.example/token' }, 'invalid_url', 'token_endpoint'],
      [{ ...valid, token_endpoint: 'http://tokens.example/token' }, 'invalid_url', 'token_endpoint'],
      [{ ...valid, token_endpoint: 'not a url' }, 'invalid_url', 'token_endpoint'],
      [{ ...valid, client_id: '$ENV:bad-name' }, 'invalid_env_reference', 'client_id'],
      [{ ...valid, client_id: 7 }, 'invalid_field_type', 'client_id'],
      [{ ...valid, scope: 'x'.repeat(1025) }, 'field_too_long', 'scope'],
      [{ ...valid, client_secret: 'x'.repeat(8193) }, 'field_too_long', 'client_secret'],
      [
        { ...valid, resource: Array.from({ length: 9 }, (_, i) => `https://r${i}.example/`) },
        'array_too_many',
        'resource',
      ],
      [{ ...valid, resource: [] }, 'array_too_few', 'resource'],
      [{ ...valid, resource: 'not a uri' }, 'invalid_url', 'resource'],
      [{ ...valid, auth_method: 'header' }, 'invalid_auth_method_value', 'auth_method'],
      [[valid], 'invalid_blob_shape', 'oauth_client_credentials'],
    ]
    for (const [body, code, field] of cases) {
      const refused = await save(body)
      expect(refused.status, code).toBe(400)
      expect(refused.body, JSON.stringify(body).slice(0, 80)).toMatchObject({ code, field })
    }
    const broken = await save('{ not json')
    expect(broken.body).toMatchObject({ code: 'invalid_blob_shape', field: 'oauth_client_credentials' })
    expect((await save(valid, stranger)).status).toBe(403)
    const badAgent = await api(
      registry(),
      'saveAgentOAuthClientCredentials',
      `/api/registry/agents/${encodeURIComponent('not-a-url')}/oauth-client-credentials`,
      { method: 'PUT', token: owner, body: valid },
    )
    expect(badAgent.body).toMatchObject({ error: 'invalid_agent_url', code: 'invalid_url' })
  })

  it.skipIf(!backend)('exchanges saved client credentials at a real token endpoint', async () => {
    expect((await exchange()).status).toBe(404)
    const saved = await save({
      token_endpoint: `${tokens.origin}/token`,
      client_id: CLIENT_ID,
      client_secret: SECRET,
      scope: 'adcp:read adcp:write',
      resource: ['https://secured-agent.example/', 'https://secured-agent.example/a2a'],
      audience: 'secured-agent',
    })
    expect(saved.status).toBe(200)
    expect(saved.body).toMatchObject({
      connected: true,
      has_auth: true,
      auth_type: 'oauth_client_credentials',
    })
    expect(
      (await api(registry(), 'getAgentAuthStatus', `${path}/auth-status`, { token: owner })).body,
    ).toMatchObject({
      has_auth: true,
      auth_type: 'oauth_client_credentials',
      agent_context_id: saved.body.agent_context_id,
      has_oauth_client_credentials: true,
    })
    expect(
      await controllerCredentials(
        registry().repository,
        registry().deps.compliance!.credentials!,
      ).credentialFor(agentUrl),
    ).toEqual({
      type: 'oauth_client_credentials',
      tokenEndpoint: `${tokens.origin}/token`,
      clientId: CLIENT_ID,
      clientSecret: SECRET,
      scope: 'adcp:read adcp:write',
    })

    const ok = await exchange()
    expect(ok.status).toBe(200)
    expect(ok.body).toEqual({ ok: true, latency_ms: expect.any(Number) })
    const request = tokens.seen.at(-1)!
    expect(request.form.get('grant_type')).toBe('client_credentials')
    expect(request.form.get('scope')).toBe('adcp:read adcp:write')
    expect(request.form.getAll('resource')).toEqual([
      'https://secured-agent.example/',
      'https://secured-agent.example/a2a',
    ])
    expect(request.form.get('audience')).toBe('secured-agent')
    expect(request.authorization).toBe(`Basic ${Buffer.from(`${CLIENT_ID}:${SECRET}`).toString('base64')}`)
    expect(request.form.get('client_secret')).toBeNull()
    expect((await exchange(stranger)).status).toBe(403)

    // Wrong secret, sent in the body: the endpoint's typed error comes back.
    await save({
      token_endpoint: `${tokens.origin}/token`,
      client_id: CLIENT_ID,
      client_secret: 'wrong-secret',
      auth_method: 'body',
    })
    const refused = await exchange()
    expect(refused.status).toBe(200)
    expect(refused.body).toMatchObject({
      ok: false,
      error: {
        kind: 'oauth',
        oauth_error: 'invalid_client',
        oauth_error_description: 'client authentication failed',
        http_status: 401,
      },
    })
    expect(tokens.seen.at(-1)!.form.get('client_id')).toBe(CLIENT_ID)
    expect(tokens.seen.at(-1)!.authorization).toBeUndefined()

    await save({ token_endpoint: `${tokens.origin}/malformed`, client_id: CLIENT_ID, client_secret: SECRET })
    expect((await exchange()).body).toMatchObject({
      ok: false,
      error: { kind: 'malformed', http_status: 200 },
    })

    const closed = await startTokenServer()
    await closed.close()
    await save({ token_endpoint: `${closed.origin}/token`, client_id: CLIENT_ID, client_secret: SECRET })
    expect((await exchange()).body).toMatchObject({ ok: false, error: { kind: 'network' } })

    // `$ENV:` references are stored as written and never resolved from the registry's environment.
    await save({
      token_endpoint: `${tokens.origin}/token`,
      client_id: CLIENT_ID,
      client_secret: '$ENV:AGENT_SECRET',
    })
    const before = tokens.seen.length
    expect((await exchange()).body).toMatchObject({ ok: false, latency_ms: 0, error: { kind: 'malformed' } })
    expect(tokens.seen.length).toBe(before)

    const log = await api(registry(), 'getAgentMonitoringRequests', `${path}/monitoring/requests`, {
      token: owner,
    })
    const tests = log.body.requests.filter(
      (entry: { request_type: string }) => entry.request_type === 'oauth_token_test',
    )
    expect(tests.map((entry: { success: boolean }) => entry.success)).toEqual([
      false,
      false,
      false,
      false,
      true,
    ])

    // Back to the working configuration for the at-rest check below.
    await save({ token_endpoint: `${tokens.origin}/token`, client_id: CLIENT_ID, client_secret: SECRET })
    expect((await exchange()).body.ok).toBe(true)
  })

  it.skipIf(!backend)('keeps no secret in plain text in the database', async () => {
    const stored: string[] = []
    if (backend!.kind === 'sqlite') {
      for (const file of [database.file!, `${database.file!}-wal`]) {
        if (existsSync(file)) stored.push(readFileSync(file).toString('latin1'))
      }
      expect(stored.join('')).toContain('registry_agent_credentials')
    } else {
      const client = new pg.Client({ connectionString: backend!.url })
      await client.connect()
      try {
        const { rows } = await client.query(
          `SELECT * FROM "${database.env.DATABASE_SCHEMA}".registry_agent_credentials`,
        )
        expect(rows).toHaveLength(1)
        stored.push(JSON.stringify(rows))
      } finally {
        await client.end()
      }
    }
    const text = stored.join('')
    expect(text).toContain('v1.')
    for (const secret of [BEARER, SECRET]) {
      expect(text).not.toContain(secret)
      expect(text).not.toContain(Buffer.from(secret).toString('base64'))
    }
  })

  it.skipIf(!backend)(
    'refuses to store credentials without a key, and opens none with another key',
    async () => {
      await running.registry.close()
      running = await startStatusRegistry(database, { env: { AGENT_CREDENTIALS_KEY: '' } })
      const refused = await api(registry(), 'connectAgent', `${path}/connect`, {
        method: 'PUT',
        token: owner,
        body: { auth_token: BEARER },
      })
      expect(refused.status).toBe(500)
      expect(refused.body.error).toBe('credentials_unavailable')
      await running.registry.close()
      running = await startStatusRegistry(database, {
        env: { AGENT_CREDENTIALS_KEY: Buffer.alloc(32, 9).toString('base64') },
      })
      const wrongKey = await exchange()
      expect(wrongKey.status).toBe(500)
      expect(wrongKey.body.error).toBe('credentials_unavailable')
    },
  )

  if (!backend) it.skip(`${name}: no PostgreSQL (ADWIRE_TEST_POSTGRES_URL)`, () => {})
})
