#!/usr/bin/env node
/**
 * Our sales agent graded by the field's runner: starts the built sales agent (apps/sales-agent/dist) on a free
 * port with a temporary SQLite file and the test controller turned on as an operator turns it on for a
 * compliance run, then runs the official AdCP SDK's `adcp storyboard run` over MCP and over A2A, with the SDK's
 * bundled storyboards and with the vendored compliance bundle (ADCP_COMPLIANCE_DIR), and prints the passed,
 * failed and skipped step counts of each run. Slow (minutes); not part of `pnpm test`.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..', '..', '..')
const ADCP = join(here, '..', 'node_modules', '@adcp', 'sdk', 'bin', 'adcp.js')
const SALES_AGENT = join(root, 'apps', 'sales-agent', 'dist', 'server.js')
const BUNDLES = { bundled: undefined, '3.1.19': join(root, 'conformance', 'compliance', '3.1.19') }
const TOKEN = 'grader-token-for-the-adcp-sdk-storyboard-runner-0123'

const { values } = parseArgs({
  options: {
    help: { type: 'boolean', short: 'h' },
    protocol: { type: 'string', multiple: true },
    bundle: { type: 'string', multiple: true },
    failures: { type: 'string' },
    raw: { type: 'string' },
    timeout: { type: 'string', default: '600' },
    'webhook-receiver': { type: 'boolean' },
    storyboards: { type: 'string' },
  },
})
if (values.help) {
  console.log(`Usage: pnpm --filter @adwire/adcp-sdk-runner grade [options]

Grades the built sales agent (run \`pnpm build\` first) with the official AdCP SDK's storyboard runner and prints
passed/failed/skipped steps per protocol and bundle.

  --protocol mcp|a2a       a protocol to run (repeatable; default both)
  --bundle bundled|3.1.19  the SDK's bundled storyboards or the vendored 3.1.19 bundle (repeatable; default both)
  --failures FILE          write every failed step (run, storyboard, step, reason) as JSON to FILE
  --raw DIR                keep each run's JSON result in DIR (result-PROTOCOL-BUNDLE.json)
  --timeout SECONDS        the limit of one run (default 600)
  --webhook-receiver       host the runner's own loopback receiver (grades the webhook_emission steps)
  --storyboards IDS        comma-separated storyboard or bundle ids to run (default: all that apply)
  -h, --help               this help`)
  process.exit(0)
}
const protocols = values.protocol ?? ['mcp', 'a2a']
const bundles = values.bundle ?? Object.keys(BUNDLES)
for (const bundle of bundles) if (!(bundle in BUNDLES)) throw new Error(`unknown bundle ${bundle}`)

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

async function startAgent(dir) {
  const port = await freePort()
  const child = spawn(process.execPath, [SALES_AGENT], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(dir, 'sales-agent.sqlite')}`,
      TOKENS: `grader:${TOKEN}:read+write+delete+approve`,
      // The grader's accounts are all sandbox, as an operator sets up a compliance run.
      SANDBOX_PRINCIPALS: 'grader',
      ALLOW_INSECURE_WEBHOOK_URLS: '1',
      COMPLY_TEST_CONTROLLER: '1',
      TEST_KIT_CREDENTIALS: '1',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const url = `http://127.0.0.1:${port}`
  for (let attempt = 0; attempt < 150; attempt++) {
    if (child.exitCode !== null) throw new Error(`the sales agent exited with ${child.exitCode}`)
    try {
      if ((await fetch(`${url}/.well-known/agent-card.json`)).status < 500) return { child, url }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  child.kill()
  throw new Error('the sales agent did not start')
}

function runStoryboards(url, protocol, bundle, dir) {
  const summary = join(dir, `summary-${protocol}-${bundle}.json`)
  const agentUrl = protocol === 'mcp' ? `${url}/mcp` : url
  const args = [
    ADCP,
    'storyboard',
    'run',
    agentUrl,
    '--protocol',
    protocol,
    '--auth',
    TOKEN,
    '--json',
    '--allow-http',
  ]
  args.push('--timeout', values.timeout, '--summary-output', summary)
  if (values['webhook-receiver']) args.push('--webhook-receiver', 'loopback')
  if (values.storyboards) args.push('--storyboards', values.storyboards)
  const env = { ...process.env }
  if (BUNDLES[bundle]) env.ADCP_COMPLIANCE_DIR = BUNDLES[bundle]
  else delete env.ADCP_COMPLIANCE_DIR
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    let stderr = ''
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('close', (code) => resolve({ code, stdout, stderr, summary }))
  })
}

/** Step counts from the runner's JSON result (its `summary`), and its failed steps. */
function countSteps(result) {
  const { steps_passed: passed, steps_failed: failed, steps_skipped: skipped } = result.summary ?? {}
  const failures = (result.failures ?? []).map((failure) => ({
    storyboard: failure.storyboard_id,
    step: failure.step_id,
    task: failure.task,
    reason: failure.validation?.error ?? failure.validation?.description ?? failure.error ?? '',
  }))
  return { counts: { passed, failed, skipped }, failures, controller: result.controller_detected }
}

const dir = mkdtempSync(join(tmpdir(), 'adwire-sdk-grade-'))
const allFailures = []
let agent
try {
  for (const bundle of bundles)
    for (const protocol of protocols) {
      // A fresh agent and database for every run, so one run's seeded state does not grade the next.
      agent = await startAgent(mkdtempSync(join(dir, `${protocol}-${bundle}-`)))
      const run = await runStoryboards(agent.url, protocol, bundle, dir)
      agent.child.kill()
      agent = undefined
      let result
      try {
        result = JSON.parse(run.stdout.slice(run.stdout.indexOf('{')))
      } catch {
        console.log(
          `${protocol} ${bundle}: no JSON result (exit ${run.code}): ${(run.stdout + run.stderr).slice(0, 600)}`,
        )
        continue
      }
      if (values.raw)
        writeFileSync(join(values.raw, `result-${protocol}-${bundle}.json`), JSON.stringify(result, null, 2))
      const { counts, failures, controller } = countSteps(result)
      allFailures.push(...failures.map((failure) => ({ run: `${protocol} ${bundle}`, ...failure })))
      console.log(
        `${protocol.padEnd(3)} ${bundle.padEnd(7)} passed ${counts.passed}  failed ${counts.failed}  skipped ${counts.skipped}  controller ${controller ? 'detected' : 'not detected'}`,
      )
    }
  if (values.failures) writeFileSync(values.failures, `${JSON.stringify(allFailures, null, 2)}\n`)
} finally {
  agent?.child.kill()
  rmSync(dir, { recursive: true, force: true })
}
