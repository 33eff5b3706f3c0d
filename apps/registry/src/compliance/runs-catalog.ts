/**
 * The storyboard catalog the registry serves and runs: the vendored AdCP 3.1.19 compliance bundle, loaded once
 * through `@adwire/storyboards`, shown in the document's `StoryboardSummary` / `StoryboardDetail` shapes, and
 * the bundles an agent's declared capabilities make applicable.
 */
import { complianceDir } from '@adwire/adcp-data'
import {
  loadBundle,
  storyboardGate,
  type AgentProfile,
  type Bundle,
  type BundleEntry,
  type Storyboard,
} from '@adwire/storyboards'

/** The compliance targets this registry serves (one bundle: 3.1.19), by the name a caller may ask for. */
const TARGETS = new Map([
  ['3.1', '3.1'],
  ['3.1.19', '3.1'],
  ['3', '3.1'],
])

/** The requested target (default `3.1`), or `undefined` when this registry has no bundle for it. */
export function complianceTarget(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return '3.1'
  return TARGETS.get(value.trim())
}

export const SUPPORTED_TARGETS = '3.1 (bundle 3.1.19)'

let cached: Bundle | undefined

/**
 * The official 3.1.19 bundle (loaded on first use), as `@adwire/adcp-data` ships it, beside the schemas the
 * bundle reads.
 */
export function storyboardBundle(): Bundle {
  return (cached ??= loadBundle(complianceDir))
}

const text = (value: unknown): string => (typeof value === 'string' ? value.trim() : '')

/** The storyboards of the catalog: every file but the `domains/` copies of `protocols/`. */
export function catalogEntries(bundle: Bundle = storyboardBundle()): BundleEntry[] {
  return bundle.entries.filter((entry) => !entry.duplicateOf)
}

/** The entry for an id or bundle key, or `undefined`. */
export function findStoryboard(id: string, bundle: Bundle = storyboardBundle()): BundleEntry | undefined {
  if (id.length > 256) return undefined
  return bundle.find(id)
}

const agentOf = (storyboard: Storyboard) =>
  (storyboard.agent ?? {}) as { interaction_model?: unknown; examples?: unknown }

export const categoryOf = (storyboard: Storyboard): string =>
  text(storyboard.category) || text(storyboard.track) || 'uncategorized'

export const trackOf = (storyboard: Storyboard): string | null => text(storyboard.track) || null

/** The document's `StoryboardSummary`. */
export function summaryOf(entry: BundleEntry) {
  const { storyboard } = entry
  const agent = agentOf(storyboard)
  return {
    id: storyboard.id,
    title: storyboard.title ?? storyboard.id,
    category: categoryOf(storyboard),
    summary: text(storyboard.summary),
    interaction_model: text(agent.interaction_model) || 'unspecified',
    examples: Array.isArray(agent.examples) ? agent.examples.map(String) : [],
    phase_count: storyboard.phases.length,
    step_count: storyboard.phases.reduce((sum, phase) => sum + phase.steps.length, 0),
  }
}

/** One step as the catalog shows it. */
export function stepOf(step: Storyboard['phases'][number]['steps'][number]) {
  return {
    id: step.id,
    title: step.title ?? step.id,
    description: text(step.narrative) || text(step.description) || step.title || step.task,
    expected_output: text(step.expected),
    task: step.task,
  }
}

/** The document's `StoryboardDetail`. */
export function detailOf(entry: BundleEntry) {
  const { storyboard } = entry
  const agent = agentOf(storyboard)
  const track = trackOf(storyboard)
  return {
    id: storyboard.id,
    title: storyboard.title ?? storyboard.id,
    category: categoryOf(storyboard),
    summary: text(storyboard.summary),
    ...(text(storyboard.narrative) ? { narrative: text(storyboard.narrative) } : {}),
    agent: {
      interaction_model: text(agent.interaction_model) || 'unspecified',
      examples: Array.isArray(agent.examples) ? agent.examples.map(String) : [],
    },
    phases: storyboard.phases.map((phase) => ({
      id: phase.id,
      title: phase.title ?? phase.id,
      ...(phase.optional ? { optional: true } : {}),
      steps: phase.steps.map(stepOf),
    })),
    ...(storyboard.prerequisites ? { prerequisites: storyboard.prerequisites } : {}),
    ...(storyboard.required_tools ? { required_tools: storyboard.required_tools } : {}),
    ...(track ? { track } : {}),
    bundle_key: entry.key,
  }
}

/** The test kit a storyboard names, if the bundle has it. */
export function testKitOf(entry: BundleEntry, bundle: Bundle = storyboardBundle()): unknown {
  const path = entry.storyboard.prerequisites?.test_kit
  return path ? bundle.testKits.get(path.replace(/^\.?\//, '')) : undefined
}

/** The storyboards an agent's profile makes applicable, grouped by bundle (universal, domain, specialism). */
export function applicableBundles(profile: AgentProfile, bundle: Bundle = storyboardBundle()) {
  const groups = new Map<
    string,
    {
      kind: 'universal' | 'domain' | 'specialism'
      id: string
      storyboards: Array<{ id: string; title: string; summary: string; step_count: number }>
    }
  >()
  for (const entry of catalogEntries(bundle)) {
    const gate = storyboardGate(entry, profile)
    // Out of scope, or a document without phases: not run. Other gates (a missing tool, the controller) still
    // run the storyboard, which then reports why its steps were skipped.
    if (gate && (gate.reason === 'not_applicable' || gate.reason === 'no_phases')) continue
    const { scope } = entry
    const [kind, id] =
      scope.kind === 'universal'
        ? (['universal', 'universal'] as const)
        : scope.kind === 'protocol'
          ? (['domain', scope.protocol] as const)
          : (['specialism', scope.specialism] as const)
    const key = `${kind}:${id}`
    let group = groups.get(key)
    if (!group) groups.set(key, (group = { kind, id, storyboards: [] }))
    const summary = summaryOf(entry)
    group.storyboards.push({
      id: summary.id,
      title: summary.title,
      summary: summary.summary,
      step_count: summary.step_count,
    })
  }
  return [...groups.values()]
}

/** Every specialism the bundle has storyboards for. */
export function knownSpecialisms(bundle: Bundle = storyboardBundle()): string[] {
  const found = new Set<string>()
  for (const entry of bundle.entries) if (entry.scope.kind === 'specialism') found.add(entry.scope.specialism)
  return [...found].sort()
}
