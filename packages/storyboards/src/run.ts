/**
 * `runStoryboards`: connects to an agent over MCP or A2A, reads its tools and `get_adcp_capabilities`, and runs
 * the selected storyboards of a bundle one after another, bounded by per-step and per-run timeouts.
 */
import type { AgentProfile } from './applicability.js'
import { loadBundle, type Bundle, type BundleEntry } from './bundle.js'
import { StoryboardError } from './errors.js'
import type { Credentials } from './http.js'
import { emptyCounts, type RunResult, type StoryboardResult } from './result.js'
import type { RunEnvironment } from './run-context.js'
import { createSchemaValidator } from './schemas.js'
import { runStoryboard } from './storyboard-run.js'
import { connect, type Protocol } from './caller.js'
import type { TestKit } from './types.js'
import type { WebhookSession } from './webhook-receiver.js'

/** Options of {@link runStoryboards}. */
export interface RunOptions {
  /** The agent's base URL (MCP at `<url>/mcp`, the A2A card at `<url>/.well-known/agent-card.json`). */
  agentUrl: string
  protocol?: Protocol
  /** Storyboard keys or ids; default: every storyboard of the bundle that is not a `domains/` duplicate. */
  storyboards?: readonly string[]
  /** A loaded bundle, or the bundle directory (default: the 3.1.19 bundle of @adwire/adcp-data). */
  bundle?: Bundle | string
  /** Bearer credential for every call; default: the storyboard test kit's `auth.api_key`. */
  auth?: string
  /** Values laid over every test kit (operator facts the kit cannot know, e.g. `supports_audio_formats`). */
  testKitOverrides?: Record<string, unknown>
  /** The agent's public URL where it differs from `agentUrl` (its placeholders and URLs it advertises). */
  publicUrl?: string
  /** The run hosts this webhook receiver (see `startWebhookReceiver`). */
  webhooks?: WebhookSession
  /** The operator asserts out-of-band seeded state (`requires: [seeded_state]`). */
  seededState?: boolean
  /** Per step, ms. Default 30,000. */
  stepTimeoutMs?: number
  /** Whole run, ms. Default 600,000. */
  runTimeoutMs?: number
  /** Largest response body, bytes. Default 4 MiB. */
  maxResponseBytes?: number
  /** Called as each storyboard finishes. */
  onStoryboard?: (result: StoryboardResult) => void
  fetch?: typeof fetch
}

function testKitFor(
  bundle: Bundle,
  entry: BundleEntry,
  overrides: Record<string, unknown> | undefined,
): TestKit {
  const path = entry.storyboard.prerequisites?.test_kit
  const kit = (path ? bundle.testKits.get(path.replace(/^\.?\//, '')) : undefined) ?? {}
  return { ...kit, ...overrides }
}

/**
 * The storyboards to run: each selected one followed by the scenarios it names in `requires_scenarios`
 * (transitively, each once), which the bundle runs alongside it (storyboard-schema.yaml, `requires_scenarios`).
 */
export function withScenarios(bundle: Bundle, selected: readonly BundleEntry[]): BundleEntry[] {
  const out: BundleEntry[] = []
  const seen = new Set<string>()
  const add = (entry: BundleEntry) => {
    if (seen.has(entry.key)) return
    seen.add(entry.key)
    out.push(entry)
    for (const scenario of entry.storyboard.requires_scenarios ?? []) add(bundle.get(scenario))
  }
  for (const entry of selected) add(entry)
  return out
}

/**
 * Runs storyboards against an agent and returns the result document.
 * @example
 * const result = await runStoryboards({ agentUrl: 'http://127.0.0.1:4200', storyboards: ['capability_discovery'] })
 * result.summary.steps.failed // 0
 */
export async function runStoryboards(options: RunOptions): Promise<RunResult> {
  if (!URL.canParse(options.agentUrl) || !/^https?:$/.test(new URL(options.agentUrl).protocol)) {
    throw new StoryboardError('invalid_options', `agentUrl must be an http(s) URL, not "${options.agentUrl}"`)
  }
  const agentUrl = options.agentUrl.replace(/\/+$/, '')
  const publicUrl = (options.publicUrl ?? agentUrl).replace(/\/+$/, '')
  const bundle = typeof options.bundle === 'object' ? options.bundle : loadBundle(options.bundle)
  const entries = withScenarios(
    bundle,
    options.storyboards
      ? options.storyboards.map((ref) => bundle.get(ref))
      : bundle.entries.filter((entry) => !entry.duplicateOf),
  )
  const protocol = options.protocol ?? 'mcp'
  const stepTimeoutMs = options.stepTimeoutMs ?? 30_000
  const started = performance.now()
  const deadline = started + (options.runTimeoutMs ?? 600_000)
  const startedAt = new Date().toISOString()
  const defaultKit = bundle.testKits.get('test-kits/acme-outdoor.yaml') as
    (TestKit & { auth?: { api_key?: string } }) | undefined
  const token = options.auth ?? defaultKit?.auth?.api_key
  const credentials: Credentials = token ? { type: 'bearer', token } : { type: 'none' }
  const callerOptions = {
    credentials,
    maxResponseBytes: options.maxResponseBytes ?? 4 * 1024 * 1024,
    connectTimeoutMs: stepTimeoutMs,
    ...(publicUrl !== agentUrl
      ? { route: { publicOrigin: new URL(publicUrl).origin, localOrigin: new URL(agentUrl).origin } }
      : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  }
  let caller
  try {
    caller = await connect(protocol, agentUrl, callerOptions)
  } catch (error) {
    throw new StoryboardError(
      'connection_failed',
      `cannot connect to ${agentUrl} over ${protocol}: ${(error as Error).message}`,
      { cause: error },
    )
  }
  try {
    const tasks = new Set(await caller.tasks())
    const readCapabilities = () => caller.call('get_adcp_capabilities', {}, stepTimeoutMs)
    let answer = tasks.has('get_adcp_capabilities') ? await readCapabilities() : undefined
    // The profile every gate reads: a transport failure without an answer (a keep-alive socket the agent closed
    // under the first call) is tried once more rather than read as an agent declaring nothing.
    if (answer && !answer.body && answer.error) answer = await readCapabilities()
    const capabilities = answer?.body ?? {}
    const profile: AgentProfile = {
      tasks,
      capabilities,
      contracts: new Set(options.webhooks ? ['webhook_receiver_runner'] : []),
      seededState: options.seededState ?? false,
    }
    const env: RunEnvironment = {
      agentUrl: publicUrl,
      connectUrl: agentUrl,
      protocol,
      caller,
      callerOptions,
      profile,
      schemas: bundle.schemasDir ? createSchemaValidator(bundle.schemasDir, bundle.version) : undefined,
      stepTimeoutMs,
      webhooks: options.webhooks,
      defaultTestKit: { ...defaultKit, ...options.testKitOverrides },
    }
    const results: StoryboardResult[] = []
    for (const entry of entries) {
      const result = await runStoryboard(
        entry,
        env,
        testKitFor(bundle, entry, options.testKitOverrides),
        deadline,
      )
      results.push(result)
      options.onStoryboard?.(result)
    }
    const storyboards = emptyCounts()
    const steps = emptyCounts()
    let advisory = 0
    for (const result of results) {
      storyboards[result.status]++
      for (const step of result.steps) {
        steps[step.status]++
        advisory += step.validations.filter((v) => !v.passed && v.severity === 'advisory').length
      }
    }
    return {
      format: 'adwire-storyboards-result/1',
      adcp_version: bundle.version,
      agent_url: publicUrl,
      protocol,
      started_at: startedAt,
      duration_ms: Math.round(performance.now() - started),
      timed_out: performance.now() > deadline,
      summary: { storyboards, steps, validations_advisory_failed: advisory },
      storyboards: results,
    }
  } finally {
    await caller.close().catch(() => {})
  }
}
