import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBrokenAgent, type BrokenAgent } from '@adwire/storyboards/testing'
import { run, type Io } from './index.js'

async function adwire(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const io: Io = {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    read: async (file) => readFileSync(file),
  }
  const code = await run(argv, io)
  return { code, stdout, stderr }
}

let healthy: BrokenAgent
let broken: BrokenAgent
beforeAll(async () => {
  healthy = await startBrokenAgent([], { products: true })
  broken = await startBrokenAgent(['no_context_echo'])
})
afterAll(async () => {
  await healthy.close()
  await broken.close()
})

describe('adwire storyboard', () => {
  it('list prints every storyboard of the vendored bundle with its applicability rules', async () => {
    const { code, stdout, stderr } = await adwire('storyboard', 'list')
    expect(code).toBe(0)
    const lines = stdout.trim().split('\n')
    expect(lines).toHaveLength(183)
    expect(lines).toContain('universal/capability-discovery\tcapability_discovery\tevery agent')
    expect(lines.find((line) => line.startsWith('specialisms/creative-template/index\t'))).toMatch(
      /specialism creative-template/,
    )
    expect(stderr).toMatch(/^183 storyboards \(AdCP 3\.1\.19/)
  })

  it('show prints the phases, steps and checks', async () => {
    const { code, stdout } = await adwire('storyboard', 'show', 'capability_discovery')
    expect(code).toBe(0)
    expect(stdout).toContain('phase protocol_discovery')
    expect(stdout).toContain('  get_capabilities: get_adcp_capabilities')
    expect(stdout).toContain('      - field_value context.correlation_id')
  })

  it('run exits 0 when nothing failed, with a progress line per storyboard and the JSON result', async () => {
    const json = path.join(mkdtempSync(path.join(tmpdir(), 'adwire-sb-')), 'result.json')
    const { code, stdout, stderr } = await adwire(
      'storyboard',
      'run',
      healthy.url,
      'capability_discovery',
      'security_baseline',
      '--json',
      json,
    )
    expect(code).toBe(0)
    expect(stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^PASS capability_discovery \(universal\/capability-discovery\) 2\/2 steps passed/,
      ),
      expect.stringMatching(/^PASS security_baseline /),
    ])
    expect(stdout).toMatch(/storyboards\s+2\s+0\s+0\s+0/)
    const result = JSON.parse(readFileSync(json, 'utf8'))
    expect(result).toMatchObject({
      format: 'adwire-storyboards-result/1',
      adcp_version: '3.1.19',
      protocol: 'mcp',
    })
  })

  it('run takes the transport URL an agent prints (…/mcp) as the agent at its base over that protocol', async () => {
    const json = path.join(mkdtempSync(path.join(tmpdir(), 'adwire-sb-')), 'result.json')
    const { code, stderr } = await adwire(
      'storyboard',
      'run',
      `${healthy.url}/mcp`,
      'capability_discovery',
      '--json',
      json,
    )
    expect(stderr).not.toMatch(/cannot connect|\/mcp\/mcp/)
    expect(code).toBe(0)
    expect(JSON.parse(readFileSync(json, 'utf8'))).toMatchObject({ protocol: 'mcp' })
  })

  it('run exits 1 when a step failed, and names the failed check', async () => {
    const { code, stdout, stderr } = await adwire('storyboard', 'run', broken.url, 'capability_discovery')
    expect(code).toBe(1)
    expect(stderr).toMatch(/^FAIL capability_discovery/)
    expect(stdout).toContain('- context_echo: expected context')
  })

  it('--webhook-receiver hosts the receiver: the webhook storyboard runs and the unsigned deliveries fail it', async () => {
    const without = await adwire('storyboard', 'run', healthy.url, 'webhook_emission')
    expect(without.code).toBe(0)
    expect(without.stderr).toMatch(/^SKIP webhook_emission .* requirement_unmet: webhook_receiver/)
    const { code, stdout, stderr } = await adwire(
      'storyboard',
      'run',
      healthy.url,
      'webhook_emission',
      '--webhook-receiver',
      '--step-timeout',
      '5000',
    )
    expect(code).toBe(1)
    expect(stderr).toMatch(/^FAIL webhook_emission/)
    expect(stdout).toContain('expect_key_stable_across_retries (expect_webhook_retry_keys_stable)')
    expect(stdout).toContain('- webhook_signature: signature_invalid:')
  })

  it('exits 2 on usage errors, unknown storyboards and unreachable agents', async () => {
    expect((await adwire('storyboard')).code).toBe(2)
    expect(await adwire('storyboard', 'run')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('needs the agent URL'),
    })
    expect(await adwire('storyboard', 'run', healthy.url, '--protocol', 'grpc')).toMatchObject({ code: 2 })
    expect(await adwire('storyboard', 'show', 'no_such_storyboard')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('storyboard_not_found'),
    })
    // A storyboard named by the last part of its id: the error names the full id it meant.
    expect(await adwire('storyboard', 'run', healthy.url, 'vendor_metric_accountability')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('did you mean "media_buy_seller/vendor_metric_accountability"?'),
    })
    const closed = await startBrokenAgent([])
    await closed.close()
    expect(
      await adwire('storyboard', 'run', closed.url, 'capability_discovery', '--step-timeout', '2000'),
    ).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('connection_failed'),
    })
  })
})
