/**
 * The running creative agent over MCP, driven by the official MCP client on 127.0.0.1 with a real SQLite file:
 * the list → build → preview workflow, every error case, bearer and public access, idempotent replay and
 * conflict, and the preview pages. Every response is checked against the official 3.1.19 schemas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningCreativeAgent } from './service.js'
import {
  BUYER_TOKEN,
  READER_TOKEN,
  brief,
  expectOfficial,
  fid,
  mcpCall,
  mcpClient,
  mcpError,
  mcpFails,
  newKey,
  startTestAgent,
  type Body,
} from './test-support.js'

let agent: RunningCreativeAgent

beforeAll(async () => {
  agent = await startTestAgent()
})
afterAll(() => agent.close())

const LIST = 'creative/list-creative-formats-response.json'
const BUILD = 'media-buy/build-creative-response.json'
const PREVIEW = 'creative/preview-creative-response.json'

async function ok(token: string | undefined, tool: string, args: Body, schema: string): Promise<Body> {
  const result = await mcpCall(agent, token, tool, args)
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy()
  expectOfficial(schema, result.structuredContent)
  return result.structuredContent
}

describe('the listening socket', () => {
  it('binds 127.0.0.1 when HOST is unset', () => {
    expect(agent.listener.address).toBe('127.0.0.1')
    expect(agent.listener.boundUrl).toBe(agent.url)
  })
})

describe('MCP tools', () => {
  it('lists the four tasks with input schemas that require idempotency_key where needed', async () => {
    const client = await mcpClient(agent)
    const { tools } = await client.listTools()
    await client.close()
    expect(tools.map((tool) => tool.name)).toEqual([
      'get_adcp_capabilities',
      'list_creative_formats',
      'build_creative',
      'preview_creative',
    ])
    const build = tools.find((tool) => tool.name === 'build_creative')!
    expect(build.inputSchema.required).toContain('idempotency_key')
    expect(build.inputSchema.properties).toHaveProperty('target_format_id')
    expect(build.inputSchema.properties).toHaveProperty('context')
  })
})

describe('the list → build → preview workflow', () => {
  it('finds a format, builds a creative for it from a brief and previews it at a served URL', async () => {
    const context = { correlation_id: 'workflow-1' }
    const listed = await ok(
      undefined,
      'list_creative_formats',
      { type: 'display', max_width: 300, max_height: 250, name_search: '300x250', context },
      LIST,
    )
    expect(listed.context).toEqual(context)
    const format = listed.formats.find((f: Body) => f.format_id.id === 'display_300x250_image')
    expect(format.format_id).toEqual(fid(agent, 'display_300x250_image'))
    for (const f of listed.formats) expectOfficial('core/format.json', f)

    const built = await ok(
      BUYER_TOKEN,
      'build_creative',
      { idempotency_key: newKey(), ...brief(agent), context },
      BUILD,
    )
    expect(built.context).toEqual(context)
    expect(built.creative_manifest.format_id).toEqual(format.format_id)
    expectOfficial('core/creative-manifest.json', built.creative_manifest)
    expect(built.creative_manifest.assets.image).toMatchObject({
      asset_type: 'image',
      width: 300,
      height: 250,
    })

    const previewed = await ok(
      undefined,
      'preview_creative',
      {
        request_type: 'single',
        creative_manifest: built.creative_manifest,
        inputs: [{ name: 'default' }, { name: 'boston', macros: { CITY: 'Boston' } }],
        context,
      },
      PREVIEW,
    )
    expect(previewed.context).toEqual(context)
    expect(previewed.previews).toHaveLength(2)
    const render = previewed.previews[0].renders[0]
    expect(render.preview_url).toMatch(new RegExp(`^${agent.publicUrl}/previews/pv_[0-9a-f]{32}$`))
    const page = await fetch(render.preview_url)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    expect(page.headers.get('content-security-policy')).toContain('sandbox')
    const html = await page.text()
    expect(html).toContain('data-format="display_300x250_image"')
    expect(html).toContain(built.creative_manifest.assets.image.url)
    expect(new Date(previewed.expires_at).getTime()).toBeGreaterThan(Date.now())
  })

  it('answers html previews inline and batches with per-item errors in request order', async () => {
    const built = await ok(
      BUYER_TOKEN,
      'build_creative',
      { idempotency_key: newKey(), ...brief(agent) },
      BUILD,
    )
    const manifest = built.creative_manifest
    const batch = await ok(
      undefined,
      'preview_creative',
      {
        request_type: 'batch',
        output_format: 'html',
        requests: [
          { creative_manifest: manifest },
          { creative_manifest: { ...manifest, format_id: fid(agent, 'no_such_format') } },
          {
            creative_manifest: manifest,
            inputs: [{ name: 'x', macros: { CLICK_URL: 'https://x.example/' } }],
          },
        ],
      },
      PREVIEW,
    )
    expect(batch.results.map((r: Body) => r.success)).toEqual([true, false, true])
    expect(batch.results[0].response.previews[0].renders[0].preview_html).toMatch(/^<!doctype html>/)
    expect(batch.results[1].errors[0]).toMatchObject({ code: 'FORMAT_NOT_SUPPORTED' })
  })

  it('transforms a complete manifest into another format and builds several formats atomically', async () => {
    const source = await ok(
      BUYER_TOKEN,
      'build_creative',
      { idempotency_key: newKey(), ...brief(agent) },
      BUILD,
    )
    const moved = await ok(
      BUYER_TOKEN,
      'build_creative',
      {
        idempotency_key: newKey(),
        target_format_id: fid(agent, 'display_728x90_html'),
        creative_manifest: source.creative_manifest,
      },
      BUILD,
    )
    expect(moved.creative_manifest.format_id.id).toBe('display_728x90_html')
    expect(moved.creative_manifest.assets.html.content).toMatch(/^<!doctype html>/)
    const many = await ok(
      BUYER_TOKEN,
      'build_creative',
      {
        idempotency_key: newKey(),
        ...brief(agent),
        target_format_id: undefined,
        target_format_ids: [fid(agent, 'display_300x250_image'), fid(agent, 'display_728x90_html')],
      },
      BUILD,
    )
    expect(many.creative_manifests.map((m: Body) => m.format_id.id)).toEqual([
      'display_300x250_image',
      'display_728x90_html',
    ])
  })

  it('pages through list_creative_formats with a cursor', async () => {
    const first = await ok(undefined, 'list_creative_formats', { pagination: { max_results: 10 } }, LIST)
    expect(first.formats).toHaveLength(10)
    expect(first.pagination).toMatchObject({ has_more: true })
    const second = await ok(
      undefined,
      'list_creative_formats',
      { pagination: { max_results: 10, cursor: first.pagination.cursor } },
      LIST,
    )
    const ids = new Set([...first.formats, ...second.formats].map((f: Body) => f.format_id.id))
    expect(ids.size).toBe(20)
  })
})

describe('CREATIVE_AGENTS', () => {
  it('lists the configured creative agents in list_creative_formats, and none when unset', async () => {
    const listed = await ok(undefined, 'list_creative_formats', { type: 'audio' }, LIST)
    expect(listed).not.toHaveProperty('creative_agents')
    const pointing = await startTestAgent({
      CREATIVE_AGENTS: 'https://video.creative.example/mcp=Video studio, https://dooh.creative.example/mcp',
    })
    try {
      const result = await mcpCall(pointing, undefined, 'list_creative_formats', { type: 'audio' })
      expectOfficial(LIST, result.structuredContent)
      expect((result.structuredContent as Body).creative_agents).toEqual([
        { agent_url: 'https://video.creative.example/mcp', agent_name: 'Video studio' },
        { agent_url: 'https://dooh.creative.example/mcp' },
      ])
    } finally {
      await pointing.close()
    }
  })
})

describe('access', () => {
  it('serves the public tasks without credentials and with any valid token', async () => {
    for (const token of [undefined, READER_TOKEN, BUYER_TOKEN]) {
      const listed = await ok(token, 'list_creative_formats', { format_ids: [fid(agent, 'audio_30s')] }, LIST)
      expect(listed.formats.map((f: Body) => f.format_id.id)).toEqual(['audio_30s'])
    }
  })

  it('refuses build_creative at the HTTP layer: 401 with WWW-Authenticate, 403 without write permission', async () => {
    const cases: [string | undefined, number, string][] = [
      [undefined, 401, 'AUTH_MISSING'],
      ['not-a-real-token-0123456789', 401, 'AUTH_INVALID'],
      [READER_TOKEN, 403, 'INSUFFICIENT_PERMISSIONS'],
    ]
    for (const [token, status, code] of cases) {
      const args = { idempotency_key: newKey(), ...brief(agent), context: { correlation_id: 'auth' } }
      const response = await fetch(`${agent.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 'auth-1',
          method: 'tools/call',
          params: { name: 'build_creative', arguments: args },
        }),
      })
      expect(response.status).toBe(status)
      if (status === 401)
        expect(response.headers.get('www-authenticate')).toMatch(
          new RegExp(`^Bearer realm="${agent.publicUrl}/mcp"`),
        )
      else expect(response.headers.get('www-authenticate')).toBeNull()
      const body = (await response.json()) as Body
      expect(body).toMatchObject({ jsonrpc: '2.0', id: 'auth-1', error: { code: -32028 } })
      expect(body.error.data.adcp_error.code).toBe(code)
    }
  })

  it('refuses a public task when a present token is unknown: AUTH_INVALID, not anonymous', async () => {
    const refused = await mcpFails(
      agent,
      'not-a-real-token-0123456789',
      'list_creative_formats',
      { format_ids: [fid(agent, 'audio_30s')] },
      'AUTH_INVALID',
    )
    expect(refused.recovery).toBe('terminal')
  })
})

describe('errors', () => {
  const manifest = () => ({
    format_id: fid(agent, 'display_300x250_image'),
    assets: {
      image: { asset_type: 'image', url: 'https://cdn.example/a.png', width: 300, height: 250 },
      click_url: { asset_type: 'url', url: 'https://acme.example/', url_type: 'clickthrough' },
    },
  })
  const cases: [string, string, Body, Body][] = [
    [
      'a bare-string target_format_id',
      'build_creative',
      { target_format_id: 'display_300x250_image' },
      { code: 'INVALID_FORMAT_ID', field: 'target_format_id' },
    ],
    [
      'a bare-string format_ids entry',
      'list_creative_formats',
      { format_ids: ['display_300x250_image'] },
      { code: 'INVALID_FORMAT_ID', field: 'format_ids[0]' },
    ],
    [
      'a bare-string preview format_id',
      'preview_creative',
      { request_type: 'single', format_id: 'display_300x250_image', creative_manifest: {} },
      { code: 'INVALID_FORMAT_ID', field: 'format_id' },
    ],
    [
      'an unsupported target format',
      'build_creative',
      { target_format_id: { agent_url: 'https://other.example', id: 'display_300x250_image' } },
      { code: 'FORMAT_NOT_SUPPORTED', field: 'target_format_id', recovery: 'correctable' },
    ],
    [
      'both target_format_id and target_format_ids',
      'build_creative',
      { target_format_id: { agent_url: 'https://x.example', id: 'a' }, target_format_ids: [] },
      { code: 'INVALID_REQUEST', field: 'target_format_ids' },
    ],
    [
      'a missing idempotency_key',
      'build_creative',
      { idempotency_key: undefined },
      { code: 'INVALID_REQUEST' },
    ],
    [
      'a page size over 100',
      'list_creative_formats',
      { pagination: { max_results: 500 } },
      { code: 'INVALID_REQUEST' },
    ],
    [
      'a preview without request_type',
      'preview_creative',
      { creative_manifest: {} },
      { code: 'INVALID_REQUEST' },
    ],
    [
      'variant previews',
      'preview_creative',
      { request_type: 'variant', variant_id: 'v1' },
      { code: 'UNSUPPORTED_FEATURE' },
    ],
    [
      'a push registration without operation_id',
      'build_creative',
      { push_notification_config: { url: 'https://buyer.example/hook' } },
      { code: 'INVALID_REQUEST', field: 'push_notification_config.operation_id' },
    ],
    ['an unknown tool', 'no_such_tool', {}, { code: 'INVALID_REQUEST' }],
  ]

  it.each(cases)('answers %s with isError and the AdCP error', async (_name, tool, args, expected) => {
    const base = tool === 'build_creative' ? { idempotency_key: newKey(), ...brief(agent) } : {}
    const result = await mcpCall(agent, BUYER_TOKEN, tool, {
      ...base,
      ...args,
      context: { correlation_id: 'e' },
    })
    const error = mcpError(result)
    expect(error).toMatchObject(expected)
    expect(result.structuredContent.context).toEqual({ correlation_id: 'e' })
    // The two-layer model: the same error in the payload errors[], with the envelope status.
    expect(result.structuredContent.errors).toEqual([error])
    expect(result.structuredContent.status).toBe('failed')
    if (tool === 'build_creative') expectOfficial(BUILD, result.structuredContent)
  })

  it('answers a manifest that misses a required asset with VALIDATION_ERROR naming the asset (422)', async () => {
    const { image: _image, ...assets } = manifest().assets
    const result = await mcpCall(agent, BUYER_TOKEN, 'build_creative', {
      idempotency_key: newKey(),
      target_format_id: fid(agent, 'display_728x90_image'),
      creative_manifest: { format_id: fid(agent, 'display_300x250_image'), assets },
    })
    const error = mcpError(result)
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', field: 'creative_manifest.assets.image' })
    expect(error.message).toContain('image')
  })

  it('answers a preview of a too-small image with VALIDATION_ERROR naming the asset', async () => {
    const bad = manifest()
    bad.assets.image.width = 120
    const result = await mcpCall(agent, undefined, 'preview_creative', {
      request_type: 'single',
      creative_manifest: bad,
    })
    expect(mcpError(result)).toMatchObject({
      code: 'VALIDATION_ERROR',
      field: 'creative_manifest.assets.image',
    })
  })

  it('refuses a webhook URL on a private address when insecure URLs are not allowed', async () => {
    const strict = await startTestAgent({ ALLOW_INSECURE_WEBHOOK_URLS: '' })
    try {
      const result = await mcpCall(strict, BUYER_TOKEN, 'build_creative', {
        idempotency_key: newKey(),
        ...brief(strict),
        push_notification_config: { url: 'http://10.0.0.8/hook', operation_id: 'op-1' },
      })
      expect(mcpError(result)).toMatchObject({
        code: 'INVALID_REQUEST',
        field: 'push_notification_config.url',
      })
    } finally {
      await strict.close()
    }
  })
})

describe('idempotency', () => {
  it('replays the same response for the same key and refuses a changed request under it', async () => {
    const key = newKey()
    const args = { idempotency_key: key, ...brief(agent), context: { correlation_id: 'idem-1' } }
    const first = await ok(BUYER_TOKEN, 'build_creative', args, BUILD)
    expect(first).not.toHaveProperty('replayed')
    const again = await ok(
      BUYER_TOKEN,
      'build_creative',
      { ...args, context: { correlation_id: 'idem-2' } },
      BUILD,
    )
    expect(again).toEqual({ ...first, context: { correlation_id: 'idem-2' }, replayed: true })

    const changed = await mcpCall(agent, BUYER_TOKEN, 'build_creative', {
      ...args,
      message: 'something else',
    })
    const error = mcpError(changed)
    expect(error.code).toBe('IDEMPOTENCY_CONFLICT')
    expect(JSON.stringify(changed.structuredContent)).not.toContain('creative_manifest')
  })

  it('validates before the lookup: a malformed request under a used key is INVALID_FORMAT_ID, not a conflict', async () => {
    const key = newKey()
    await ok(BUYER_TOKEN, 'build_creative', { idempotency_key: key, ...brief(agent) }, BUILD)
    const result = await mcpCall(agent, BUYER_TOKEN, 'build_creative', {
      idempotency_key: key,
      target_format_id: 'display_300x250_image',
    })
    expect(mcpError(result).code).toBe('INVALID_FORMAT_ID')
  })

  it('keeps keys per principal: another buyer with the same key builds afresh', async () => {
    const other = await startTestAgent({
      TOKENS: `a:${BUYER_TOKEN}:write,b:${READER_TOKEN}:write`,
    })
    try {
      const key = newKey()
      await ok2(other, BUYER_TOKEN, { idempotency_key: key, ...brief(other) })
      const second = await ok2(other, READER_TOKEN, { idempotency_key: key, ...brief(other), message: 'b' })
      expect(second).not.toHaveProperty('replayed')
    } finally {
      await other.close()
    }
  })
})

async function ok2(target: RunningCreativeAgent, token: string, args: Body): Promise<Body> {
  const result = await mcpCall(target, token, 'build_creative', args)
  expect(result.isError).toBeFalsy()
  expectOfficial(BUILD, result.structuredContent)
  return result.structuredContent
}

describe('preview pages', () => {
  it('serve a page until expires_at, then 410 Gone; an unknown id is 404', async () => {
    let clock = Date.now() / 1000
    const timed = await startTestAgent({}, { now: () => clock })
    try {
      const built = await ok2(timed, BUYER_TOKEN, { idempotency_key: newKey(), ...brief(timed) })
      const previewed = (
        await mcpCall(timed, undefined, 'preview_creative', {
          request_type: 'single',
          creative_manifest: built.creative_manifest,
        })
      ).structuredContent
      expectOfficial(PREVIEW, previewed)
      const url = previewed.previews[0].renders[0].preview_url
      expect((await fetch(url)).status).toBe(200)
      clock = new Date(previewed.expires_at).getTime() / 1000 + 1
      const gone = await fetch(url)
      expect(gone.status).toBe(410)
      expect(await gone.json()).toMatchObject({ adcp_error: { code: 'REFERENCE_NOT_FOUND' } })
      expect((await fetch(`${timed.url}/previews/pv_${'0'.repeat(32)}`)).status).toBe(404)
    } finally {
      await timed.close()
    }
  })
})

describe('service endpoints', () => {
  it('answers /health, the JWKS and brand.json naming the agent and its JWKS', async () => {
    expect(await (await fetch(`${agent.url}/health`)).json()).toEqual({ status: 'ok', database: 'sqlite' })
    const jwks = (await (await fetch(`${agent.url}/.well-known/jwks.json`)).json()) as Body
    // One key per purpose: webhooks and requests sign with different keys (different kids).
    expect(jwks.keys).toHaveLength(2)
    expect(jwks.keys[0]).toMatchObject({ use: 'sig', key_ops: ['verify'], adcp_use: 'webhook-signing' })
    expect(jwks.keys[1]).toMatchObject({ use: 'sig', key_ops: ['verify'], adcp_use: 'request-signing' })
    expect(jwks.keys[0].kid).not.toBe(jwks.keys[1].kid)
    for (const key of jwks.keys) expect(key).not.toHaveProperty('d')
    const brand = (await (await fetch(`${agent.url}/.well-known/brand.json`)).json()) as Body
    expect(brand.agents[0]).toMatchObject({
      type: 'creative',
      url: agent.publicUrl,
      jwks_uri: `${agent.publicUrl}/.well-known/jwks.json`,
    })
    expect((await fetch(`${agent.url}/nowhere`)).status).toBe(404)
  })
})

describe('generated audio', () => {
  it('builds an audio spot from a script and serves its WAV at the advertised URL', async () => {
    const built = await ok(
      BUYER_TOKEN,
      'build_creative',
      {
        idempotency_key: newKey(),
        target_format_id: fid(agent, 'audio_15s'),
        creative_manifest: {
          format_id: fid(agent, 'audio_15s'),
          assets: {
            script: { asset_type: 'text', content: 'Fresh beans, every morning.' },
            voice: { asset_type: 'text', content: 'narrator-warm' },
          },
        },
      },
      BUILD,
    )
    const audio = built.creative_manifest.assets.audio
    expect(audio).toMatchObject({ asset_type: 'audio', duration_ms: 15_000, container_format: 'wav' })
    expect(audio.url.startsWith(`${agent.publicUrl}/generated/audio/`)).toBe(true)
    const response = await fetch(audio.url.replace(agent.publicUrl, agent.url))
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('audio/wav')
    const bytes = Buffer.from(await response.arrayBuffer())
    expect(bytes.length).toBe(audio.file_size_bytes)
    expect(bytes.subarray(0, 4).toString('ascii')).toBe('RIFF')
    expect((await fetch(`${agent.url}/generated/audio/nope.wav`)).status).toBe(404)
    expect((await fetch(`${agent.url}/generated/audio/0123456789abcdef-999999.wav`)).status).toBe(404)
  })
})

describe('behind a proxy (PUBLIC_URL https)', () => {
  it('advertises the public URL; capabilities and brand.json validate against the official schemas', async () => {
    const proxied = await startTestAgent({ PUBLIC_URL: 'https://creative.adwire.test/' })
    try {
      expect(proxied.publicUrl).toBe('https://creative.adwire.test')
      const caps = (
        await mcpCall(proxied, undefined, 'get_adcp_capabilities', { context: { correlation_id: 'c' } })
      ).structuredContent
      expectOfficial('protocol/get-adcp-capabilities-response.json', caps)
      expect(caps).toMatchObject({
        supported_protocols: ['creative'],
        adcp: { major_versions: [3], idempotency: { supported: true, replay_ttl_seconds: 86_400 } },
        webhook_signing: { supported: true, profile: 'adcp/webhook-signing/v1', algorithms: ['ed25519'] },
        identity: {
          brand_json_url: 'https://creative.adwire.test/.well-known/brand.json',
          key_origins: {
            webhook_signing: 'https://creative.adwire.test',
            request_signing: 'https://creative.adwire.test',
          },
        },
        context: { correlation_id: 'c' },
      })
      expect(caps.creative.supported_formats[0]).toMatchObject({
        capability_id: 'image_300x250',
        format: {
          format_kind: 'image',
          v1_format_ref: [{ agent_url: 'https://creative.adwire.test', id: 'display_300x250_image' }],
        },
      })
      expect(caps.ext.adwire.tasks).toEqual([
        'get_adcp_capabilities',
        'list_creative_formats',
        'build_creative',
        'preview_creative',
      ])
      const brand = await (await fetch(`${proxied.url}/.well-known/brand.json`)).json()
      expectOfficial('brand.json', brand)
      const listed = (await mcpCall(proxied, undefined, 'list_creative_formats', {})).structuredContent
      expect(listed.formats[0].format_id.agent_url).toBe('https://creative.adwire.test')
      const card = (await (await fetch(`${proxied.url}/.well-known/agent.json`)).json()) as Body
      expect(card.supportedInterfaces[0].url).toBe('https://creative.adwire.test/a2a')
    } finally {
      await proxied.close()
    }
  })
})
