import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { registryCommand } from './commands/registry.js'
import { run, type Io } from './index.js'

const KEY = 'sk_cli_test'
const dir = mkdtempSync(join(tmpdir(), 'adwire-cli-registry-'))
const events: Array<{ event_id: string; event_type: string; entity_id: string }> = []
const addEvent = (type = 'authorization.granted') => {
  const event = {
    event_id: `01900000-0000-7000-8000-${(events.length + 1).toString(16).padStart(12, '0')}`,
    event_type: type,
    entity_type: type.split('.')[0]!,
    entity_id: 'news.example',
    payload: { agent_url: 'https://sales.example/mcp', publisher_domain: 'news.example' },
    actor: 'crawler',
    created_at: new Date().toISOString(),
  }
  events.push(event)
  return event
}

/** A small registry: just the endpoints the commands call, with the registry's error and feed semantics. */
const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1')
  const q = (name: string) => url.searchParams.get(name)
  const json = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  }
  const fail = (r: ServerResponse, status: number, code: string, message: string) => {
    r.writeHead(status, { 'content-type': 'application/json' })
    r.end(JSON.stringify({ error: code, message }))
  }
  let body = ''
  req.on('data', (chunk: Buffer) => (body += chunk.toString()))
  req.on('end', () => {
    switch (`${req.method} ${url.pathname}`) {
      case 'GET /api/brands/resolve':
        if (q('domain') === 'busy.example') {
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '12' })
          return res.end(JSON.stringify({ error: 'rate_limited', message: 'slow down', retryAfter: 12 }))
        }
        if (q('domain') === 'acme.example') {
          return json(200, {
            canonical_id: 'acme.example',
            canonical_domain: 'acme.example',
            brand_name: 'Acme',
            source: 'brand_json',
          })
        }
        return fail(res, 404, 'not_found', `no brand for ${q('domain')}`)
      case 'GET /api/properties/resolve':
        return json(200, {
          publisher_domain: q('domain'),
          source: 'adagents_json',
          verified: true,
          authorized_agents: [{ url: 'https://sales.example/mcp', authorized_for: 'display' }],
          properties: [
            {
              id: 'site',
              type: 'website',
              name: 'News',
              identifiers: [{ type: 'domain', value: 'news.example' }],
            },
            ...(q('domain') === 'news.example'
              ? [
                  { id: 'app', type: 'mobile_app', name: 'News app', identifiers: [] },
                  { id: 'radio', type: 'radio', name: 'News radio', identifiers: [] },
                ]
              : []),
          ],
        })
      case 'GET /api/registry/publisher/authorization': {
        // news.example has three properties: sales.example may sell two, partial.example none.
        if (q('domain') !== 'news.example') return fail(res, 404, 'publisher_not_found', 'unknown publisher')
        const sales = q('agent') === 'https://sales.example/mcp'
        const all = q('agent') === 'https://all.example/mcp'
        const unauthorized = [
          { id: 'site', name: 'News', type: 'website' },
          { id: 'app', name: 'News app', type: 'mobile_app' },
          { id: 'radio', name: 'News radio', type: 'radio' },
        ].filter((property) => !all && !(sales && property.id !== 'radio'))
        return json(200, {
          publisher_domain: 'news.example',
          agent_url: q('agent'),
          authorized: 3 - unauthorized.length,
          total: 3,
          publisher_wide: all,
          source: 'adagents_json',
          unauthorized_properties: unauthorized,
        })
      }
      case 'GET /api/registry/validate/property-authorization':
        return json(200, {
          agent_url: q('agent_url'),
          identifier_type: q('identifier_type'),
          identifier_value: q('identifier_value'),
          authorized:
            q('agent_url') === 'https://sales.example/mcp' && q('identifier_value') === 'news.example',
          checked_at: new Date().toISOString(),
        })
      case 'POST /api/adagents/validate': {
        const { domain } = JSON.parse(body) as { domain: string }
        const valid = domain === 'news.example'
        return json(200, {
          success: true,
          data: {
            domain,
            found: true,
            validation: {
              valid,
              domain,
              url: `https://${domain}/.well-known/adagents.json`,
              errors: valid
                ? []
                : [{ field: 'authorized_agents', message: 'is required', severity: 'error' }],
              warnings: [],
            },
          },
          timestamp: new Date().toISOString(),
        })
      }
      case 'GET /api/registry/feed': {
        if (req.headers.authorization !== `Bearer ${KEY}`)
          return fail(res, 401, 'unauthorized', 'authentication required')
        const cursor = q('cursor')
        if (cursor && !events.some((e) => e.event_id === cursor)) {
          return json(410, { error: 'cursor_expired', message: 'Cursor is older than the retention window' })
        }
        const limit = Number(q('limit') ?? 100)
        const after = events.filter((e) => !cursor || e.event_id > cursor)
        const page = after.slice(0, limit)
        return json(200, {
          events: page,
          cursor: page.at(-1)?.event_id ?? cursor,
          has_more: after.length > limit,
          freshness: {
            generated_at: new Date().toISOString(),
            latest_event_created_at: null,
            lag_seconds: null,
            retention_days: 90,
          },
        })
      }
      default:
        return fail(res, 404, 'not_found', 'no route')
    }
  })
})
let base = ''

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
  rmSync(dir, { recursive: true, force: true })
})

function io(): Io & { out: () => string; err: () => string } {
  let stdout = ''
  let stderr = ''
  return {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    read: (path) => readFile(path),
    out: () => stdout,
    err: () => stderr,
  }
}

async function adwire(...argv: string[]) {
  const streams = io()
  const code = await run(['registry', ...argv], streams)
  return { code, stdout: streams.out(), stderr: streams.err() }
}

describe('adwire registry', () => {
  it('prints help and rejects bad usage with exit code 2', async () => {
    expect(await adwire('--help')).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('resolve brand DOMAIN'),
    })
    expect((await adwire()).code).toBe(2)
    expect((await adwire('explode')).code).toBe(2)
    expect(await adwire('resolve', 'brand', 'not a domain', '--url', base)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('not a domain name'),
    })
    expect((await adwire('resolve', 'brand', 'acme.example', '--url', 'ftp://x')).code).toBe(2)
    expect((await adwire('lookup', '--url', base, '--publisher', 'news.example')).code).toBe(2)
    expect((await adwire('feed', '--url', base, '--limit', '0')).code).toBe(2)
    expect((await adwire('feed', '--url', base, '--types', 'Bad Type')).code).toBe(2)
  })

  it('resolves a brand as a summary and as JSON; an unknown brand exits 1', async () => {
    expect(await adwire('resolve', 'brand', 'acme.example', '--url', base)).toEqual({
      code: 0,
      stdout: 'acme.example: Acme (canonical acme.example, source brand_json)\n',
      stderr: '',
    })
    const json = await adwire('resolve', 'brand', 'acme.example', '--url', base, '--json')
    expect(JSON.parse(json.stdout)).toMatchObject({ brand_name: 'Acme' })
    const missing = await adwire('resolve', 'brand', 'nobody.example', '--url', base)
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('no brand for nobody.example (HTTP 404 not_found)')
    const busy = await adwire('resolve', 'brand', 'busy.example', '--url', base)
    expect(busy).toMatchObject({ code: 1 })
    expect(busy.stderr).toContain('slow down (HTTP 429 rate_limited)')
    expect(busy.stderr).toContain('retry in 12 s')
  })

  it('resolves a property with its agents', async () => {
    const result = await adwire('resolve', 'property', 'news.example', '--url', base)
    expect(result.code).toBe(0)
    expect(result.stdout).toContain(
      'news.example: 3 properties, 1 authorized agents (source adagents_json, verified)',
    )
    expect(result.stdout).toContain('agent https://sales.example/mcp')
  })

  it('checks authorization: exit 0 when authorized, 1 when not', async () => {
    const some = await adwire(
      'lookup',
      '--url',
      base,
      '--agent',
      'https://sales.example/mcp',
      '--publisher',
      'news.example',
    )
    expect(some).toEqual({
      code: 0,
      stdout:
        "authorized for some (2 of 3) of news.example's properties: https://sales.example/mcp\n" +
        '  yes site (website) News\n' +
        '  yes app (mobile_app) News app\n' +
        '  no  radio (radio) News radio\n',
      stderr: '',
    })
    const all = await adwire(
      'lookup',
      '--url',
      base,
      '--agent',
      'https://all.example/mcp',
      '--publisher',
      'news.example',
      '--json',
    )
    expect(all.code).toBe(0)
    expect(JSON.parse(all.stdout)).toMatchObject({
      verdict: 'all',
      authorized: 3,
      total: 3,
      publisher_wide: true,
      properties: [
        { id: 'site', authorized: true },
        { id: 'app', authorized: true },
        { id: 'radio', authorized: true },
      ],
    })
    const none = await adwire(
      'lookup',
      '--url',
      base,
      '--agent',
      'https://other.example/mcp',
      '--publisher',
      'news.example',
    )
    expect(none).toMatchObject({
      code: 1,
      stdout: expect.stringContaining("NOT authorized for any (0 of 3) of news.example's properties"),
    })
    const unknown = await adwire(
      'lookup',
      '--url',
      base,
      '--agent',
      'https://sales.example/mcp',
      '--publisher',
      'elsewhere.example',
    )
    expect(unknown).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('unknown publisher (HTTP 404 publisher_not_found)'),
    })
    const no = await adwire(
      'lookup',
      '--url',
      base,
      '--agent',
      'https://other.example/mcp',
      '--identifier',
      'domain:news.example',
    )
    expect(no).toMatchObject({ code: 1, stdout: expect.stringContaining('NOT authorized') })
  })

  it('validates a local adagents.json file offline, good and broken', async () => {
    const good = join(dir, 'good.json')
    writeFileSync(
      good,
      JSON.stringify({
        authorized_agents: [
          {
            url: 'https://sales.example/mcp',
            authorized_for: 'All display',
            authorization_type: 'property_tags',
            property_tags: ['news'],
          },
        ],
        properties: [
          {
            property_id: 'site',
            property_type: 'website',
            name: 'News',
            identifiers: [{ type: 'domain', value: 'news.example' }],
            tags: ['news'],
          },
        ],
      }),
    )
    expect(await adwire('validate', good)).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('valid (AdCP 3.1.19'),
    })
    const broken = join(dir, 'broken.json')
    writeFileSync(broken, JSON.stringify({ authorized_agents: [{ url: 'not a url' }] }))
    const result = await adwire('validate', broken, '--json')
    expect(result.code).toBe(1)
    expect(JSON.parse(result.stdout)).toMatchObject({
      valid: false,
      errors: expect.arrayContaining([expect.objectContaining({ message: expect.any(String) })]),
    })
    const notJson = join(dir, 'not.json')
    writeFileSync(notJson, '{oops')
    expect(await adwire('validate', notJson)).toMatchObject({
      code: 1,
      stdout: expect.stringContaining('not JSON'),
    })
  })

  it('validates a domain or URL through the registry', async () => {
    expect(await adwire('validate', 'news.example', '--url', base)).toMatchObject({
      code: 0,
      stdout: 'https://news.example/.well-known/adagents.json: valid\n',
    })
    const broken = await adwire('validate', 'https://broken.example/', '--url', base)
    expect(broken.code).toBe(1)
    expect(broken.stdout).toContain('INVALID')
    expect(broken.stdout).toContain('error authorized_agents: is required')
  })

  it('reads the feed once, resumes from the cursor file, and explains 401 and 410', async () => {
    const first = [addEvent(), addEvent(), addEvent('property.updated')]
    const cursorFile = join(dir, 'cursor')
    const once = await adwire(
      'feed',
      '--url',
      base,
      '--api-key',
      KEY,
      '--cursor-file',
      cursorFile,
      '--limit',
      '2',
    )
    expect(once.code).toBe(0)
    expect(
      once.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { event_id: string }).event_id),
    ).toEqual(first.map((e) => e.event_id))
    expect(readFileSync(cursorFile, 'utf8').trim()).toBe(first[2]!.event_id)
    const next = addEvent('authorization.revoked')
    const again = await adwire('feed', '--url', base, '--api-key', KEY, '--cursor-file', cursorFile)
    expect(again.stdout.trim().split('\n')).toHaveLength(1)
    expect(again.stdout).toContain(next.event_id)

    const anonymous = await adwire('feed', '--url', base)
    expect(anonymous.code).toBe(1)
    expect(anonymous.stderr).toContain('needs --api-key')

    writeFileSync(cursorFile, '01900000-0000-7000-8000-ffffffffffff\n')
    const expired = await adwire('feed', '--url', base, '--api-key', KEY, '--cursor-file', cursorFile)
    expect(expired.code).toBe(1)
    expect(expired.stderr).toContain('cursor_expired')
    expect(expired.stderr).toContain(`delete ${cursorFile}`)
  })

  it('follows the feed until stopped', async () => {
    const cursorFile = join(dir, 'follow-cursor')
    writeFileSync(cursorFile, `${events.at(-1)!.event_id}\n`)
    const streams = io()
    const controller = new AbortController()
    const running = registryCommand(
      [
        'feed',
        '--follow',
        '--url',
        base,
        '--api-key',
        KEY,
        '--cursor-file',
        cursorFile,
        '--interval',
        '0.02',
      ],
      streams,
      { signal: controller.signal },
    )
    const added = addEvent('publisher.adagents_changed')
    for (let i = 0; i < 200 && !streams.out().includes(added.event_id); i++)
      await new Promise((r) => setTimeout(r, 10))
    controller.abort()
    expect(await running).toBe(0)
    expect(streams.out()).toContain(added.event_id)
    expect(readFileSync(cursorFile, 'utf8').trim()).toBe(added.event_id)
  })
})

describe('adwire registry admin', () => {
  it("is not part of the CLI: it points at the registry app's own admin entry", async () => {
    const result = await adwire('admin', 'create-org', '--name', 'Acme Media')
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain('pnpm --filter @adwire/app-registry admin create-org --name NAME')
  })

  it('never reaches into an app: no source or build file names apps/ or spawns a process', async () => {
    const { readdirSync } = await import('node:fs')
    const roots = ['src', 'dist'].map((name) => join(import.meta.dirname, '..', name))
    const files = roots.flatMap((root) =>
      readdirSync(root, { recursive: true, encoding: 'utf8' })
        .filter((file) => /\.(ts|js)$/.test(file) && !/\.test\.ts$/.test(file))
        .map((file) => join(root, file)),
    )
    expect(files.length).toBeGreaterThan(10)
    for (const file of files) {
      const text = readFileSync(file, 'utf8')
      expect(text, file).not.toMatch(/apps[\\/]registry|node:child_process/)
    }
  })
})
