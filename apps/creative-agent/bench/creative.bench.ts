/**
 * The creative agent's latencies: list_creative_formats, build_creative, and preview_creative as one batch of 10
 * versus 10 single calls, both in-process (the domain handlers) and through the running service over HTTP
 * (official MCP client, 127.0.0.1, SQLite). Reported as medians and ratios (benches report ratios; tests never
 * assert timings). The goal the spec sets: a batch of 10 at least 5x faster than 10 singles.
 *
 *   pnpm --filter @adwire/app-creative-agent bench
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { listCreativeFormats } from '@adwire/formats'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { buildCreative } from '../src/creative/build-creative.js'
import type { CreativeContext } from '../src/creative/context.js'
import { previewCreative } from '../src/creative/preview-creative.js'
import { createMemoryPreviewStore } from '../src/creative/preview-store.js'
import { parseEnv } from '../src/env.js'
import { startCreativeAgent } from '../src/service.js'

const TOKEN = 'bench-token-0123456789abcdef'
const TARGETS = [
  'display_300x250_image',
  'display_728x90_image',
  'display_160x600_image',
  'display_300x600_image',
  'display_320x50_image',
  'display_970x250_image',
  'display_300x250_html',
  'display_728x90_html',
  'display_160x600_html',
  'display_320x50_html',
]

type Json = Record<string, unknown>
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const ms = (value: number) => `${value.toFixed(3)} ms`

/** Median wall time of `run` over `rounds` rounds after `warmup` unmeasured ones. */
async function time(
  run: () => Promise<unknown>,
  rounds: number,
  warmup = Math.ceil(rounds / 5),
): Promise<number> {
  for (let i = 0; i < warmup; i += 1) await run()
  const samples: number[] = []
  for (let i = 0; i < rounds; i += 1) {
    const began = performance.now()
    await run()
    samples.push(performance.now() - began)
  }
  return median(samples)
}

const brief = (agentUrl: string, target: string, index: number): Json => ({
  idempotency_key: `bench-build-${index}-${crypto.randomUUID()}`,
  target_format_id: { agent_url: agentUrl, id: target },
  creative_manifest: {
    format_id: { agent_url: agentUrl, id: target },
    assets: {
      promoted_offerings: {
        brand_manifest: {
          name: `Brand ${index}`,
          url: `https://brand${index}.example/`,
          colors: { primary: '#1a3c6e', secondary: '#ffd23f' },
        },
        inline_offerings: [
          { name: `Offer ${index}`, description: `The offer number ${index}, this week only.` },
        ],
      },
    },
  },
})

const manifestsFor = async (agentUrl: string, build: (args: Json) => Promise<Json>) => {
  const out: Json[] = []
  for (const [index, target] of TARGETS.entries())
    out.push((await build(brief(agentUrl, target, index))).creative_manifest as Json)
  return out
}
const single = (manifest: Json, round: number): Json => ({
  request_type: 'single',
  creative_manifest: manifest,
  inputs: [{ name: `round ${round}`, macros: { CACHEBUSTER: String(round) } }],
})
const batch = (manifests: Json[], round: number): Json => ({
  request_type: 'batch',
  requests: manifests.map((creative_manifest) => ({
    creative_manifest,
    inputs: [{ name: `round ${round}`, macros: { CACHEBUSTER: String(round) } }],
  })),
})

function report(title: string, rows: [string, number][], ratios: [string, number][]): void {
  console.log(`\n${title}`)
  for (const [name, value] of rows) console.log(`  ${name.padEnd(44)} ${ms(value)}`)
  for (const [name, value] of ratios) console.log(`  ${name.padEnd(44)} ${value.toFixed(1)}x`)
}

// In-process: the domain handlers, a memory preview store.
{
  const agentUrl = 'https://creative.bench.example'
  const context = (): CreativeContext => ({ agentUrl, now: new Date(), previews })
  const previews = createMemoryPreviewStore()
  const manifests = await manifestsFor(
    agentUrl,
    async (args) => (await buildCreative(args, context())) as unknown as Json,
  )
  let round = 0
  const list = await time(() => listCreativeFormats({}, context()), 300)
  const listFiltered = await time(
    () => listCreativeFormats({ type: 'display', max_width: 728 }, context()),
    300,
  )
  const build = await time(() => buildCreative(brief(agentUrl, 'display_300x250_html', 0), context()), 200)
  const singles = await time(async () => {
    round += 1
    for (const manifest of manifests) await previewCreative(single(manifest, round), context())
  }, 100)
  const batched = await time(() => previewCreative(batch(manifests, (round += 1)), context()), 100)
  report(
    'in-process (domain handlers)',
    [
      ['list_creative_formats (all, first page)', list],
      ['list_creative_formats (display, max_width 728)', listFiltered],
      ['build_creative (generate html 300x250)', build],
      ['preview_creative: 10 single calls', singles],
      ['preview_creative: 1 batch of 10', batched],
    ],
    [['batch of 10 vs 10 singles: speed-up', singles / batched]],
  )
}

// Through the running service: MCP over HTTP on 127.0.0.1, SQLite, bearer token.
{
  const agent = await startCreativeAgent(
    parseEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(mkdtempSync(join(tmpdir(), 'creative-bench-')), 'bench.sqlite')}`,
      TOKENS: `bench:${TOKEN}:read+write`,
    }),
  )
  const client = new Client({ name: 'bench', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    }),
  )
  const call = async (name: string, args: Json): Promise<Json> => {
    const result = (await client.callTool({ name, arguments: args })) as {
      structuredContent: Json
      isError?: boolean
    }
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent)}`)
    return result.structuredContent
  }
  try {
    const manifests = await manifestsFor(agent.publicUrl, (args) => call('build_creative', args))
    let round = 0
    const list = await time(() => call('list_creative_formats', {}), 100)
    let index = 0
    const build = await time(
      () => call('build_creative', brief(agent.publicUrl, 'display_300x250_html', (index += 1))),
      60,
    )
    const singles = await time(async () => {
      round += 1
      for (const manifest of manifests) await call('preview_creative', single(manifest, round))
    }, 30)
    const batched = await time(() => call('preview_creative', batch(manifests, (round += 1))), 30)
    report(
      'service over HTTP (MCP client, 127.0.0.1, SQLite)',
      [
        ['list_creative_formats (all, first page)', list],
        ['build_creative (generate html 300x250, durable key)', build],
        ['preview_creative: 10 single calls', singles],
        ['preview_creative: 1 batch of 10', batched],
      ],
      [['batch of 10 vs 10 singles: speed-up', singles / batched]],
    )
  } finally {
    await client.close()
    await agent.close()
  }
}
