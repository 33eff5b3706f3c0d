/**
 * A full compliance run against the creative agent: every storyboard of the vendored AdCP 3.1.19 bundle (not the
 * domains/ copies) through @adwire/storyboards, over MCP and over A2A, against the service on 127.0.0.1 (SQLite).
 * Reports the wall time, the steps run per second and, as the ratio benches report, the run's time per executed
 * step against one get_adcp_capabilities round trip measured in the same run. Run once; tests never assert timings.
 *
 *   pnpm --filter @adwire/app-creative-agent bench:storyboards
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { loadBundle, runStoryboards } from '@adwire/storyboards'
import { parseEnv } from '../src/env.js'
import { startCreativeAgent } from '../src/service.js'

const PUBLIC_URL = 'https://creative-agent.adwire.test'
const bundle = loadBundle()
const token = (bundle.testKits.get('test-kits/acme-outdoor.yaml') as { auth: { api_key: string } }).auth
  .api_key
const dataDir = mkdtempSync(join(tmpdir(), 'adwire-storyboards-bench-'))
const agent = await startCreativeAgent(
  parseEnv({
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: `sqlite:${join(dataDir, 'creative-agent.sqlite')}`,
    TOKENS: `acme-outdoor-buyer:${token}:read+write`,
    PUBLIC_URL,
  }),
)
try {
  const client = new Client({ name: 'bench', version: '0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  )
  const samples: number[] = []
  for (let i = 0; i < 60; i += 1) {
    const began = performance.now()
    await client.callTool({ name: 'get_adcp_capabilities', arguments: {} })
    if (i >= 10) samples.push(performance.now() - began)
  }
  await client.close()
  const roundTrip = [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!
  console.log(`get_adcp_capabilities round trip (MCP, median of 50): ${roundTrip.toFixed(3)} ms`)
  for (const protocol of ['mcp', 'a2a'] as const) {
    const began = performance.now()
    const result = await runStoryboards({
      agentUrl: agent.url,
      publicUrl: PUBLIC_URL,
      protocol,
      bundle,
      testKitOverrides: { supports_audio_formats: true },
    })
    const wall = performance.now() - began
    const { storyboards, steps } = result.summary
    const executed = steps.passed + steps.failed
    const total = steps.passed + steps.failed + steps.skipped + steps.not_applicable
    console.log(
      `${protocol}: ${result.storyboards.length} storyboards (${storyboards.passed} passed, ${storyboards.failed} failed, ` +
        `${storyboards.skipped} skipped, ${storyboards.not_applicable} n/a), ${total} steps (${executed} executed: ` +
        `${steps.passed} passed, ${steps.failed} failed) in ${wall.toFixed(0)} ms; ` +
        `${((total / wall) * 1000).toFixed(0)} steps/s graded, ${((executed / wall) * 1000).toFixed(1)} executed steps/s; ` +
        `${(wall / Math.max(executed, 1) / roundTrip).toFixed(1)}x a capabilities round trip per executed step`,
    )
    for (const storyboard of result.storyboards.filter((entry) => entry.status === 'failed')) {
      const failed = storyboard.steps.filter((step) => step.status === 'failed').map((step) => step.step_id)
      console.log(`  failed: ${storyboard.key}: ${failed.join(', ')}`)
    }
  }
} finally {
  await agent.close()
  rmSync(dataDir, { recursive: true, force: true })
}
