import { writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { brandJsonResolver } from '@adwire/http-signatures'
import { createSafeFetch } from '@adwire/http-signatures/node'
import {
  loadBundle,
  renderReport,
  runStoryboards,
  startWebhookReceiver,
  storyboardLine,
  StoryboardError,
  type Bundle,
  type BundleEntry,
  type WebhookSession,
} from '@adwire/storyboards'
import { UsageError, type Io } from '../io.js'
import { asTyped } from '../help.js'

export const storyboardHelp = `usage: adwire storyboard <command> [options]

Runs the AdCP compliance storyboards (the official AdCP 3.1.19 bundle of @adwire/adcp-data unless --dir names another).

  list [--dir D]               every storyboard of the bundle with its applicability rules
  show ID [--dir D]            a storyboard's gates, phases, steps and checks (ID: id or key, e.g.
                               capability_discovery or protocols/creative/index)
  run URL [IDS…] [--protocol mcp|a2a] [--auth TOKEN] [--dir D] [--json FILE] [--webhook-receiver [URL]]
      [--step-timeout MS] [--run-timeout MS] [--public-url URL]
                               run storyboards (default: all) against the agent at URL; progress on stderr
                               (one line per storyboard), the report and summary table on stdout; --json
                               writes the result document (format adwire-storyboards-result/1);
                               --webhook-receiver hosts the runner's receiver on 127.0.0.1 (or behind URL)
                               and verifies deliveries against the agent's brand.json keys

Exit codes: 0 nothing failed, 1 a storyboard failed (a step outside an optional phase), 2 a usage or
connection error.
`

function bundleFrom(dir: string | undefined): Bundle {
  return loadBundle(dir)
}

/** One line of applicability rules. */
function rules(entry: BundleEntry): string {
  const { storyboard, scope } = entry
  const parts = [
    scope.kind === 'universal'
      ? 'every agent'
      : scope.kind === 'protocol'
        ? `protocol ${scope.protocol}`
        : `specialism ${scope.specialism}`,
  ]
  if (storyboard.requires) parts.push(`requires ${storyboard.requires.join('+')}`)
  if (storyboard.required_any_of_tools)
    parts.push(`any of ${storyboard.required_any_of_tools.map((f) => f.tools.join('|')).join(', ')}`)
  if (storyboard.requires_capability) {
    const { path, ...matcher } = storyboard.requires_capability
    parts.push(`capability ${path} ${JSON.stringify(matcher)}`)
  }
  if (storyboard.required_tools?.length) parts.push(`tools ${storyboard.required_tools.join(',')}`)
  if (entry.duplicateOf) parts.push(`copy of ${entry.duplicateOf}`)
  return parts.join('; ')
}

function list(argv: string[], io: Io): number {
  const { values } = parseArgs({ args: argv, options: { dir: { type: 'string' } } })
  const bundle = bundleFrom(values.dir)
  for (const entry of bundle.entries) io.stdout(`${entry.key}\t${entry.storyboard.id}\t${rules(entry)}\n`)
  io.stderr(`${bundle.entries.length} storyboards (AdCP ${bundle.version}, ${bundle.dir})\n`)
  return 0
}

function show(argv: string[], io: Io): number {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { dir: { type: 'string' } },
    allowPositionals: true,
  })
  if (positionals.length !== 1) throw new UsageError('storyboard show takes one storyboard id')
  const entry = bundleFrom(values.dir).get(positionals[0]!)
  const { storyboard } = entry
  io.stdout(`${storyboard.id} (${entry.key}): ${storyboard.title ?? ''}\napplies to: ${rules(entry)}\n`)
  if (storyboard.prerequisites?.test_kit) io.stdout(`test kit: ${storyboard.prerequisites.test_kit}\n`)
  for (const phase of storyboard.phases) {
    const gates = [
      phase.optional ? 'optional' : '',
      phase.skip_if ? `skip_if ${phase.skip_if}` : '',
      phase.requires_capability ? `requires_capability ${JSON.stringify(phase.requires_capability)}` : '',
      phase.depends_on ? `depends_on [${phase.depends_on.join(', ')}]` : '',
    ].filter(Boolean)
    io.stdout(`\nphase ${phase.id}${gates.length ? ` (${gates.join('; ')})` : ''}\n`)
    for (const step of phase.steps) {
      const checks = (step.validations ?? []).map(
        (v) => `${v.check}${v.path ? ` ${v.path}` : ''}${v.severity === 'advisory' ? ' [advisory]' : ''}`,
      )
      io.stdout(
        `  ${step.id}: ${step.task}${step.stateful ? ' (stateful)' : ''}${step.expect_error ? ' (expects an error)' : ''}\n`,
      )
      for (const line of checks) io.stdout(`      - ${line}\n`)
    }
  }
  return 0
}

const positiveInt = (value: string | undefined, name: string): number | undefined => {
  if (value === undefined) return undefined
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed <= 0)
    throw new UsageError(`${name} must be a positive integer (ms)`)
  return parsed
}

async function runCommand(argv: string[], io: Io): Promise<number> {
  // --webhook-receiver takes an optional URL: a following argument that is a URL is its value.
  const args = [...argv]
  let receiver: string | true | undefined
  const index = args.indexOf('--webhook-receiver')
  if (index !== -1) {
    const next = args[index + 1]
    const urls = args.filter((arg) => /^https?:\/\//.test(arg)).length
    receiver = next && /^https?:\/\//.test(next) && urls > 1 ? next : true
    args.splice(index, receiver === true ? 1 : 2)
  }
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      protocol: { type: 'string' },
      auth: { type: 'string' },
      dir: { type: 'string' },
      json: { type: 'string' },
      'public-url': { type: 'string' },
      'step-timeout': { type: 'string' },
      'run-timeout': { type: 'string' },
    },
  })
  const [given, ...ids] = positionals
  if (!given || !URL.canParse(given) || !/^https?:$/.test(new URL(given).protocol)) {
    throw new UsageError('storyboard run needs the agent URL (http:// or https://) first')
  }
  // A transport URL (`…/mcp`, `…/a2a`, as the agents print them) names the agent at its base and, unless
  // --protocol says otherwise, the protocol: the runner adds `/mcp` to the base itself.
  const transport = /\/(mcp|a2a)\/?$/.exec(new URL(given).pathname)?.[1] as 'mcp' | 'a2a' | undefined
  const url = transport ? given.replace(/\/(mcp|a2a)\/?$/, '') : given
  const protocol = values.protocol ?? transport ?? 'mcp'
  if (protocol !== 'mcp' && protocol !== 'a2a') throw new UsageError('--protocol is mcp or a2a')
  const bundle = bundleFrom(values.dir)
  for (const id of ids) bundle.get(id)
  const stepTimeoutMs = positiveInt(values['step-timeout'], '--step-timeout')
  const runTimeoutMs = positiveInt(values['run-timeout'], '--run-timeout')
  let webhooks: WebhookSession | undefined
  if (receiver) {
    const keysFrom = values['public-url'] ?? url
    // A local agent (a development run) publishes its brand.json on a loopback address: allow that fetch.
    const local = /^(127\.|\[::1\]$|localhost$)/.test(new URL(keysFrom).hostname)
    webhooks = await startWebhookReceiver({
      keys: brandJsonResolver({
        agentUrl: keysFrom,
        ...(local ? { fetch: createSafeFetch({ allowLoopback: true, allowHttp: true }) } : {}),
      }),
      ...(receiver === true ? {} : { publicBase: receiver }),
    })
  }
  try {
    const result = await runStoryboards({
      agentUrl: url,
      protocol,
      bundle,
      ...(ids.length ? { storyboards: ids } : {}),
      ...(values.auth ? { auth: values.auth } : {}),
      ...(values['public-url'] ? { publicUrl: values['public-url'] } : {}),
      ...(webhooks ? { webhooks } : {}),
      ...(stepTimeoutMs ? { stepTimeoutMs } : {}),
      ...(runTimeoutMs ? { runTimeoutMs } : {}),
      onStoryboard: (storyboard) => io.stderr(`${storyboardLine(storyboard)}\n`),
    })
    if (values.json) await writeFile(values.json, `${JSON.stringify(result, null, 2)}\n`)
    io.stdout(`${renderReport(result)}\n`)
    return result.summary.storyboards.failed > 0 ? 1 : 0
  } finally {
    await webhooks?.close()
  }
}

/** `adwire storyboard list|show|run`. */
export async function storyboardCommand(argv: string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv
  if (sub === undefined || sub === '-h' || sub === '--help') {
    io.stdout(asTyped(storyboardHelp))
    return sub === undefined ? 2 : 0
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout(asTyped(storyboardHelp))
    return 0
  }
  try {
    if (sub === 'list') return list(rest, io)
    if (sub === 'show') return show(rest, io)
    if (sub === 'run') return await runCommand(rest, io)
  } catch (error) {
    if (StoryboardError.is(error)) {
      io.stderr(`adwire: ${error.message} (${error.code})\n`)
      return 2
    }
    throw error
  }
  throw new UsageError(`unknown storyboard command "${sub}"`)
}
