/**
 * Preview pages in the running agent on a SQLite file: a page outlives a restart on the same file, a batch's
 * pages all come back, and a database failure during preview_creative is a clear SERVICE_UNAVAILABLE answer
 * with no URLs (html previews, which store nothing, still work).
 */
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { RunningCreativeAgent } from './service.js'
import {
  BUYER_TOKEN,
  brief,
  expectOfficial,
  mcpCall,
  mcpError,
  newKey,
  startTestAgent,
  tempDir,
  type Body,
} from './test-support.js'

const PREVIEW = 'creative/preview-creative-response.json'

async function builtManifest(agent: RunningCreativeAgent, target?: string): Promise<Body> {
  const built = await mcpCall(agent, BUYER_TOKEN, 'build_creative', {
    idempotency_key: newKey(),
    ...brief(agent, target),
  })
  expect(built.isError, JSON.stringify(built.structuredContent)).toBeFalsy()
  return built.structuredContent.creative_manifest
}

/** The preview's path under the agent (`/previews/pv_…`), to fetch from whichever instance. */
const pathOf = (url: string) => new URL(url).pathname

describe('preview pages across a restart', () => {
  it('serves the same page (and every page of a batch) after the agent is closed and started again', async () => {
    const env = { DATABASE_URL: `sqlite:${join(tempDir(), 'restart.sqlite')}` }
    let agent = await startTestAgent(env)
    let paths: string[]
    let pages: string[]
    try {
      const manifests = [
        await builtManifest(agent),
        await builtManifest(agent, 'display_728x90_image'),
        await builtManifest(agent, 'display_160x600_image'),
      ]
      const single = await mcpCall(agent, undefined, 'preview_creative', {
        request_type: 'single',
        creative_manifest: manifests[0],
      })
      expectOfficial(PREVIEW, single.structuredContent)
      const batch = await mcpCall(agent, undefined, 'preview_creative', {
        request_type: 'batch',
        requests: manifests.map((creative_manifest) => ({
          creative_manifest,
          inputs: [{ name: 'a' }, { name: 'b', macros: { CACHEBUSTER: '42' } }],
        })),
      })
      expectOfficial(PREVIEW, batch.structuredContent)
      const urls = [
        single.structuredContent.previews[0].renders[0].preview_url as string,
        ...batch.structuredContent.results.flatMap((result: Body) =>
          result.response.previews.map((preview: Body) => preview.renders[0].preview_url as string),
        ),
      ]
      expect(urls).toHaveLength(7)
      paths = urls.map(pathOf)
      pages = await Promise.all(
        paths.map(async (path) => {
          const response = await fetch(`${agent.url}${path}`)
          expect(response.status).toBe(200)
          return response.text()
        }),
      )
    } finally {
      await agent.close()
    }

    agent = await startTestAgent(env)
    try {
      for (const [index, path] of paths.entries()) {
        const response = await fetch(`${agent.url}${path}`)
        expect(response.status, path).toBe(200)
        expect(response.headers.get('content-security-policy')).toContain('sandbox')
        expect(await response.text()).toBe(pages[index])
      }
      expect((await fetch(`${agent.url}/previews/pv_${'0'.repeat(32)}`)).status).toBe(404)
      expect((await fetch(`${agent.url}/previews/not-a-preview`)).status).toBe(404)
    } finally {
      await agent.close()
    }
  })
})

describe('a database failure during preview_creative', () => {
  it('answers SERVICE_UNAVAILABLE (transient) without URLs; html previews still answer', async () => {
    const logged: Record<string, unknown>[] = []
    const agent = await startTestAgent({}, { log: (entry) => logged.push(entry) })
    try {
      const manifest = await builtManifest(agent)
      await agent.runtime.deps.storage.close() // the database goes away under the running agent

      const failed = await mcpCall(agent, undefined, 'preview_creative', {
        request_type: 'batch',
        requests: [{ creative_manifest: manifest }, { creative_manifest: manifest, output_format: 'url' }],
        context: { correlation_id: 'db-down' },
      })
      const error = mcpError(failed)
      expect(error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', recovery: 'transient' })
      expect(error.message).toContain('preview')
      expect(failed.structuredContent.context).toEqual({ correlation_id: 'db-down' })
      expect(JSON.stringify(failed.structuredContent)).not.toContain('/previews/')
      expect(logged).toContainEqual(
        expect.objectContaining({ task: 'preview_creative', previews: 'not stored' }),
      )

      const inline = await mcpCall(agent, undefined, 'preview_creative', {
        request_type: 'single',
        creative_manifest: manifest,
        output_format: 'html',
      })
      expect(inline.isError).toBeFalsy()
      expectOfficial(PREVIEW, inline.structuredContent)

      const page = await fetch(`${agent.url}/previews/pv_${'0'.repeat(32)}`)
      expect(page.status).toBe(503)
      expect(await page.json()).toMatchObject({
        adcp_error: { code: 'SERVICE_UNAVAILABLE', recovery: 'transient' },
      })
    } finally {
      await agent.close()
    }
  })
})
