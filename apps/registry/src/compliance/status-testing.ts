/**
 * Test helpers of the status side: a **test launcher** (a stand-in for the real storyboard runner: each launch
 * returns a run id at once and then records the planned outcomes through the status side's own
 * `ComplianceOutcomeSink`), and a registry started on SQLite or PostgreSQL with it, on a database the caller
 * may reuse across restarts.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseEnv } from '../env.js'
import { startRegistry, type RunningRegistry } from '../service.js'
import { dropSchema, type Backend } from '../testing/registry.js'
import type { ComplianceOutcomeSink, ComplianceRunLauncher, StoryboardOutcome } from './contract.js'

export interface PlannedOutcome {
  readonly storyboardId: string
  readonly status: StoryboardOutcome['status']
}

export interface TestLauncher extends ComplianceRunLauncher {
  /** Every launch, in order. */
  readonly launches: Array<{ agentUrl: string; trigger: string; runId: string; at: number }>
  /** What the next runs of `agentUrl` report (default: `capability_discovery` passed). */
  plan(agentUrl: string, outcomes: readonly PlannedOutcome[]): void
  /** Resolves when every launched run has recorded its outcomes. */
  idle(): Promise<void>
  /** Records nothing more (the registry is closing) and resolves once the runs under way have stopped. */
  stop(): Promise<void>
}

/** A test launcher (not the real runner) recording outcomes through `sink`. */
export function createTestLauncher(
  sink: ComplianceOutcomeSink,
  options: { now: () => number; adcpVersion?: string },
): TestLauncher {
  const plans = new Map<string, readonly PlannedOutcome[]>()
  const launches: TestLauncher['launches'] = []
  const pending = new Set<Promise<void>>()
  let stopped = false
  return {
    launches,
    plan(agentUrl, outcomes) {
      plans.set(agentUrl, outcomes)
    },
    async launch(agentUrl, { trigger }) {
      const runId = randomUUID()
      const at = options.now()
      launches.push({ agentUrl, trigger, runId, at })
      const outcomes = plans.get(agentUrl) ?? [{ storyboardId: 'capability_discovery', status: 'passed' }]
      const work = (async () => {
        await new Promise((resolve) => setImmediate(resolve))
        for (const [index, planned] of outcomes.entries()) {
          if (stopped) return
          await sink.record({
            runId,
            agentUrl,
            storyboardId: planned.storyboardId,
            adcpVersion: options.adcpVersion ?? '3.1.19',
            status: planned.status,
            trigger,
            stepsPassed: planned.status === 'passed' ? 3 : 1,
            stepsFailed: planned.status === 'passed' ? 0 : 2,
            stepsSkipped: 0,
            startedAt: new Date(at + index * 1000).toISOString(),
            finishedAt: new Date(at + index * 1000 + 500).toISOString(),
          })
        }
      })()
      pending.add(work)
      void work.finally(() => pending.delete(work))
      return { runIds: [runId] }
    },
    async idle() {
      while (pending.size > 0) await Promise.all([...pending])
    },
    async stop() {
      stopped = true
      await this.idle()
    },
  }
}

/** A credentials key for tests (32 bytes, base64). */
export const TEST_CREDENTIALS_KEY = Buffer.alloc(32, 7).toString('base64')

export interface StatusRegistry {
  readonly registry: RunningRegistry
  readonly launcher: TestLauncher
}

/** Where a registry keeps its data across restarts: a SQLite file or a PostgreSQL schema. */
export interface StatusDatabase {
  readonly env: Record<string, string>
  /** The SQLite file (SQLite only). */
  readonly file?: string
  cleanup(): Promise<void>
}

export function statusDatabase(backend: Backend): StatusDatabase {
  if (backend.kind === 'sqlite') {
    const folder = mkdtempSync(join(tmpdir(), 'adwire-registry-status-'))
    const file = join(folder, 'registry.sqlite')
    return {
      env: { DATABASE_URL: `sqlite:${file}` },
      file,
      cleanup: async () => rmSync(folder, { recursive: true, force: true }),
    }
  }
  const schema = `registry_status_${randomUUID().replaceAll('-', '').slice(0, 12)}`
  return {
    env: { DATABASE_URL: backend.url, DATABASE_SCHEMA: schema },
    cleanup: () => dropSchema(backend.url, schema),
  }
}

/** Starts a registry on `database` with a test launcher, strict response validation and the test key. */
export async function startStatusRegistry(
  database: StatusDatabase,
  options: { now?: () => number; env?: Record<string, string> } = {},
): Promise<StatusRegistry> {
  const now = options.now ?? Date.now
  let launcher: TestLauncher | undefined
  const registry = await startRegistry(
    parseEnv({
      PORT: '0',
      SEED: '0',
      ALLOW_PRIVATE_CRAWL: '1',
      CRAWL_TIMEOUT_MS: '3000',
      RATE_LIMIT_READ_PER_MINUTE: '0',
      RATE_LIMIT_WRITE_PER_MINUTE: '0',
      RATE_LIMIT_CRAWL_PER_MINUTE: '0',
      MONITORING_POLL_SECONDS: '1',
      AGENT_CREDENTIALS_KEY: TEST_CREDENTIALS_KEY,
      ...database.env,
      ...options.env,
    }),
    {
      now,
      validateResponses: 'strict',
      log: (entry) => {
        if (entry.response_invalid || (entry.error && !entry.compliance_heartbeat)) console.error(entry)
      },
      complianceLauncher: ({ outcomes }) => (launcher = createTestLauncher(outcomes, { now })),
    },
  )
  // A launched run records through the registry's store: it stops before the store closes.
  const close = registry.close
  return {
    registry: {
      ...registry,
      close: async (graceMs?: number) => {
        await launcher!.stop()
        return close(graceMs)
      },
    },
    launcher: launcher!,
  }
}

/**
 * A strict well-formedness check for the badge SVGs (no XML parser is a workspace dependency): one root
 * element, every tag closed in order, attributes quoted and unique, text and attribute values free of raw `<`
 * and of `&` other than the five predefined or numeric entities. `undefined` when well-formed, else why not.
 */
export function xmlProblem(text: string): string | undefined {
  const name = '[A-Za-z_][A-Za-z0-9_.:-]*'
  const entity = /&(?!(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)/
  const stack: string[] = []
  let roots = 0
  let at = 0
  const token = new RegExp(`<(/?)(${name})((?:\\s+${name}\\s*=\\s*(?:"[^"<]*"|'[^'<]*'))*)\\s*(/?)>`, 'y')
  while (at < text.length) {
    const next = text.indexOf('<', at)
    const chunk = text.slice(at, next === -1 ? text.length : next)
    if (entity.test(chunk)) return `bad & in text at ${at}`
    if (chunk.includes('>') && stack.length === 0) return `text outside the root at ${at}`
    if (chunk.trim() !== '' && stack.length === 0) return `text outside the root at ${at}`
    if (next === -1) break
    token.lastIndex = next
    const match = token.exec(text)
    if (!match) return `malformed tag at ${next}`
    const [whole, closing, tag, attributes, selfClosing] = match
    const names = [...attributes!.matchAll(new RegExp(`(${name})\\s*=`, 'g'))].map((item) => item[1])
    if (new Set(names).size !== names.length) return `duplicate attribute in <${tag}>`
    if (entity.test(attributes!)) return `bad & in attributes of <${tag}>`
    if (closing) {
      if (attributes!.trim() !== '' || selfClosing) return `malformed closing tag </${tag}>`
      if (stack.pop() !== tag) return `</${tag}> closes the wrong element`
    } else {
      if (stack.length === 0) roots += 1
      if (roots > 1) return 'more than one root element'
      if (!selfClosing) stack.push(tag!)
    }
    at = next + whole!.length
  }
  if (stack.length > 0) return `unclosed <${stack.at(-1)}>`
  return roots === 1 ? undefined : 'no root element'
}
