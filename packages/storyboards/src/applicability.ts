/**
 * Whether a storyboard applies to an agent, decided before any step runs (storyboard-schema.yaml: the
 * protocol or specialism the file sits under, `requires`, `required_any_of_tools`, `requires_capability`),
 * and the `requires_capability` predicate itself.
 */
import type { BundleEntry } from './bundle.js'
import { resolvePath } from './path.js'
import type { SkipReason } from './result.js'
import type { CapabilityPredicate } from './types.js'

/** What the runner knows about the agent and about itself. */
export interface AgentProfile {
  /** Advertised task names (MCP tools / A2A skills). */
  tasks: ReadonlySet<string>
  /** The `get_adcp_capabilities` response. */
  capabilities: Record<string, unknown>
  /** Runner contracts in scope (`webhook_receiver_runner` when the run hosts a receiver). */
  contracts: ReadonlySet<string>
  /** The operator asserts out-of-band seeded state (`requires: [seeded_state]`). */
  seededState: boolean
}

/** A gate that failed. */
export interface Gate {
  reason: SkipReason
  detail: string
}

const show = (value: unknown): string => (value === undefined ? 'absent' : JSON.stringify(value))

/**
 * Evaluates a `requires_capability` predicate against `get_adcp_capabilities`; undefined when it holds.
 * @example capabilityGate({ path: 'creative.supports_evaluator', equals: true }, capabilities)
 */
export function capabilityGate(predicate: CapabilityPredicate, capabilities: unknown): Gate | undefined {
  const actual = resolvePath(capabilities, predicate.path)
  let holds: boolean
  let declared: string
  if ('equals' in predicate) {
    holds = JSON.stringify(actual) === JSON.stringify(predicate.equals)
    declared = `equals ${show(predicate.equals)}`
  } else if ('contains' in predicate) {
    holds =
      Array.isArray(actual) &&
      actual.some((item) => JSON.stringify(item) === JSON.stringify(predicate.contains))
    declared = `contains ${show(predicate.contains)}`
  } else {
    holds = (actual !== undefined && actual !== null) === predicate.present
    declared = predicate.present ? 'present' : 'absent'
  }
  return holds
    ? undefined
    : {
        reason: 'not_applicable',
        detail: `requires_capability ${predicate.path} ${declared}; the agent declares ${show(actual)}`,
      }
}

const KNOWN_REQUIREMENTS = new Set([
  'controller',
  'seeded_state',
  'real_wire',
  'webhook_receiver',
  'multi_agent',
])

/**
 * The first storyboard-level gate that fails for this agent, or undefined when the storyboard applies.
 * @example storyboardGate(bundle.get('creative_template'), profile) // { reason: 'not_applicable', … } or undefined
 */
export function storyboardGate(entry: BundleEntry, profile: AgentProfile): Gate | undefined {
  const { storyboard, scope } = entry
  if (storyboard.phases.length === 0) {
    return {
      reason: 'no_phases',
      detail: `${storyboard.id} ${storyboard.version ?? ''} has no phases`.trim(),
    }
  }
  const protocols = (profile.capabilities.supported_protocols as unknown[] | undefined) ?? []
  const specialisms = (profile.capabilities.specialisms as unknown[] | undefined) ?? []
  if (scope.kind === 'protocol' && !protocols.includes(scope.protocol.replace(/-/g, '_'))) {
    return {
      reason: 'not_applicable',
      detail: `the agent does not declare the ${scope.protocol.replace(/-/g, '_')} protocol (supported_protocols: ${show(protocols)})`,
    }
  }
  if (scope.kind === 'specialism' && !specialisms.includes(scope.specialism)) {
    return {
      reason: 'not_applicable',
      detail: `the agent does not claim the ${scope.specialism} specialism (specialisms: ${show(specialisms)})`,
    }
  }
  const unmet: string[] = []
  for (const requirement of storyboard.requires ?? []) {
    if (!KNOWN_REQUIREMENTS.has(requirement)) unmet.push(`unrecognized requirement ${requirement}`)
    else if (requirement === 'controller' && !profile.tasks.has('comply_test_controller'))
      unmet.push('controller')
    else if (requirement === 'seeded_state' && !profile.seededState) unmet.push('seeded_state')
    else if (requirement === 'webhook_receiver' && !profile.contracts.has('webhook_receiver_runner'))
      unmet.push('webhook_receiver')
    else if (requirement === 'multi_agent') unmet.push('multi_agent (this runner drives one agent)')
  }
  for (const family of storyboard.required_any_of_tools ?? []) {
    if (!family.tools.some((tool) => profile.tasks.has(tool))) {
      unmet.push(
        `missing_required_tool_family: needs ${family.tools.join(' or ')}${family.rationale ? ` (${family.rationale})` : ''}`,
      )
    }
  }
  if (unmet.length) return { reason: 'requirement_unmet', detail: unmet.join('; ') }
  if (storyboard.requires_capability)
    return capabilityGate(storyboard.requires_capability, profile.capabilities)
  if (
    !profile.contracts.has('webhook_receiver_runner') &&
    /\{\{\s*runner\./.test(
      JSON.stringify(storyboard.phases.flatMap((phase) => phase.steps.map((step) => step.sample_request))),
    )
  ) {
    return {
      reason: 'requirement_unmet',
      detail:
        'webhook_receiver: the storyboard substitutes {{runner.webhook_url:…}} and the run hosts no webhook receiver (unresolved_substitution)',
    }
  }
  return undefined
}
