/**
 * Two creative agents on one PostgreSQL schema (a fresh schema per run, dropped after): they settle one signing
 * key and one generated token between them, share build_creative's idempotency records and serve each other's
 * preview pages (410 from both once expired, 404 once swept).
 */
import { dropSchema, freshSchemaName, resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningCreativeAgent } from './service.js'
import { PREVIEW_TOMBSTONE_SECONDS } from './storage.js'
import { brief, expectOfficial, mcpCall, newKey, startTestAgent, type Body } from './test-support.js'

const url = await resolveTestPostgresUrl()
const schema = freshSchemaName('creative_test')

let first: RunningCreativeAgent
let second: RunningCreativeAgent
/** Seconds added to both instances' clocks (to reach a preview's expiry). */
let offset = 0
const now = () => Date.now() / 1000 + offset

describe.skipIf(!url)('two creative agents on one PostgreSQL schema', () => {
  beforeAll(async () => {
    // Instances behind one load balancer share the public URL (format_id agent_url).
    const env = {
      DATABASE_URL: url!,
      DATABASE_SCHEMA: schema,
      TOKENS: '',
      PUBLIC_URL: 'https://creative.pg.test',
    }
    ;[first, second] = await Promise.all([startTestAgent(env, { now }), startTestAgent(env, { now })])
  })

  afterAll(async () => {
    await first?.close()
    await second?.close()
    await dropSchema(url!, schema)
  })

  it('share one generated token and one signing key', async () => {
    const generated = [first, second].map((agent) => agent.runtime.deps.tokens.generated).filter(Boolean)
    expect(generated).toHaveLength(1)
    const keys = await Promise.all(
      [first, second].map(async (agent) => (await fetch(`${agent.url}/.well-known/jwks.json`)).json()),
    )
    expect(keys[0]).toEqual(keys[1])
    expect(await (await fetch(`${first.url}/health`)).json()).toEqual({ status: 'ok', database: 'postgres' })
  })

  it('replay a build made on one instance from the other, and refuse a changed request', async () => {
    const token = (first.runtime.deps.tokens.generated ?? second.runtime.deps.tokens.generated)!
    const args = { idempotency_key: newKey(), ...brief(first) }
    const built = await mcpCall(first, token, 'build_creative', args)
    expect(built.isError).toBeFalsy()
    expectOfficial('media-buy/build-creative-response.json', built.structuredContent)
    const replay = await mcpCall(second, token, 'build_creative', args)
    expect(replay.structuredContent).toEqual({ ...built.structuredContent, replayed: true })
    const changed = await mcpCall(second, token, 'build_creative', { ...args, message: 'other' })
    expect(changed.structuredContent.adcp_error.code).toBe('IDEMPOTENCY_CONFLICT')
  })

  it('serve a preview page made on one instance from the other; expired, 410 from both; swept, 404', async () => {
    const token = (first.runtime.deps.tokens.generated ?? second.runtime.deps.tokens.generated)!
    const manifests: Body[] = []
    for (const target of ['display_300x250_image', 'display_728x90_image']) {
      const built = await mcpCall(first, token, 'build_creative', {
        idempotency_key: newKey(),
        ...brief(first, target),
      })
      expect(built.isError).toBeFalsy()
      manifests.push(built.structuredContent.creative_manifest)
    }
    const previewed = await mcpCall(first, undefined, 'preview_creative', {
      request_type: 'batch',
      requests: manifests.map((creative_manifest) => ({ creative_manifest })),
    })
    expectOfficial('creative/preview-creative-response.json', previewed.structuredContent)
    const paths = previewed.structuredContent.results.map(
      (result: Body) => new URL(result.response.previews[0].renders[0].preview_url as string).pathname,
    ) as string[]
    expect(new Set(paths).size).toBe(2)
    for (const path of paths) {
      // The buyer has the URL only once the page is stored: the other instance serves it at once.
      const fromSecond = await fetch(`${second.url}${path}`)
      expect(fromSecond.status, path).toBe(200)
      const fromFirst = await fetch(`${first.url}${path}`)
      expect(await fromSecond.text()).toBe(await fromFirst.text())
    }

    const expiresAt = new Date(previewed.structuredContent.results[0].response.expires_at).getTime() / 1000
    offset = expiresAt - Date.now() / 1000 + 1
    try {
      for (const agent of [first, second]) {
        const gone = await fetch(`${agent.url}${paths[0]}`)
        expect(gone.status).toBe(410)
        expect(await gone.json()).toMatchObject({ adcp_error: { code: 'REFERENCE_NOT_FOUND' } })
      }
      await first.runtime.deps.storage.sweep(now())
      expect((await fetch(`${second.url}${paths[1]}`)).status).toBe(410)
      await second.runtime.deps.storage.sweep(now() + PREVIEW_TOMBSTONE_SECONDS)
      for (const agent of [first, second]) expect((await fetch(`${agent.url}${paths[0]}`)).status).toBe(404)
    } finally {
      offset = 0
    }
  })
})
