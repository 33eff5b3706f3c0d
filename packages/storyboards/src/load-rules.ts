/**
 * The load-time rules of `universal/storyboard-schema.yaml`: a file that breaks one is a loader error
 * (`bundle_invalid`), never a graded result.
 */
import { StoryboardError } from './errors.js'
import { parseExpression } from './expression.js'
import { parsePath } from './path.js'
import type { CapabilityPredicate, Storyboard } from './types.js'

const GENERATORS = new Set(['uuid_v4', 'opaque_id'])

const fail = (file: string, message: string): never => {
  throw new StoryboardError('bundle_invalid', `${file}: ${message}`)
}

function checkPredicate(file: string, where: string, predicate: CapabilityPredicate | undefined): void {
  if (predicate === undefined) return
  if (typeof predicate !== 'object' || typeof predicate.path !== 'string') {
    fail(file, `${where} requires_capability needs a path`)
  }
  const matchers = ['equals', 'contains', 'present'].filter((key) => key in predicate)
  if (matchers.length !== 1) {
    fail(file, `${where} requires_capability needs exactly one of equals, contains, present`)
  }
  if ('present' in predicate && typeof predicate.present !== 'boolean') {
    fail(file, `${where} requires_capability present must be a boolean`)
  }
  parsePath(predicate.path)
}

/**
 * Checks the structure the runner relies on and returns the document typed as a storyboard.
 * @example validateStoryboard('universal/x.yaml', { id: 'x', phases: [] }).id // 'x'
 */
export function validateStoryboard(file: string, doc: unknown): Storyboard {
  const storyboard = doc as Partial<Storyboard>
  if (typeof storyboard.id !== 'string' || !Array.isArray(storyboard.phases)) {
    fail(file, 'not a storyboard (needs id and phases)')
  }
  if (storyboard.requires !== undefined) {
    if (!Array.isArray(storyboard.requires) || storyboard.requires.length === 0) {
      fail(
        file,
        'requires must be a non-empty list (use requires: [real_wire] for the default behavior, or omit the field entirely)',
      )
    }
  }
  if (storyboard.required_any_of_tools !== undefined) {
    const families = storyboard.required_any_of_tools
    if (!Array.isArray(families) || families.length === 0 || families.some((f) => !Array.isArray(f?.tools))) {
      fail(file, 'required_any_of_tools must be a non-empty list of { tools: [...] }')
    }
  }
  checkPredicate(file, 'storyboard', storyboard.requires_capability)
  const phaseIds: string[] = []
  const outputs = new Set<string>()
  for (const phase of storyboard.phases!) {
    if (typeof phase.id !== 'string') fail(file, 'phase without id')
    if (phase.steps === undefined) phase.steps = []
    if (!Array.isArray(phase.steps)) fail(file, `phase ${phase.id}: steps must be a list`)
    checkPredicate(file, `phase ${phase.id}`, phase.requires_capability)
    if (phase.skip_if !== undefined) {
      try {
        parseExpression(phase.skip_if)
      } catch (error) {
        fail(file, `phase ${phase.id} skip_if: ${(error as Error).message}`)
      }
    }
    for (const dependency of phase.depends_on ?? []) {
      if (dependency === phase.id) fail(file, `phase ${phase.id} depends on itself`)
      if (!phaseIds.includes(dependency))
        fail(file, `phase ${phase.id} depends on unknown or later phase ${dependency}`)
    }
    phaseIds.push(phase.id)
    for (const step of phase.steps) {
      if (typeof step.id !== 'string' || typeof step.task !== 'string') {
        fail(file, `phase ${phase.id} has a step without id or task`)
      }
      for (const output of step.context_outputs ?? []) {
        // 3.1.19 data names the variable `key` in many storyboards (invalid_transitions, dependency_impairment,
        // ...) where storyboard-schema.yaml says `name`: the two are one field.
        const legacy = (output as { key?: unknown }).key
        if (output.name === undefined && typeof legacy === 'string') output.name = legacy
        if (typeof output.name !== 'string' || output.name === '')
          fail(file, `${step.id}: a context_outputs entry without name (or key)`)
        const hasPath = typeof output.path === 'string'
        const hasGenerate = typeof output.generate === 'string'
        if (hasPath === hasGenerate)
          fail(file, `${step.id}: context_outputs ${output.name} needs exactly one of path, generate`)
        if (hasGenerate && !GENERATORS.has(output.generate!))
          fail(file, `${step.id}: unknown generator ${output.generate}`)
        outputs.add(output.name)
      }
      for (const validation of step.validations ?? []) {
        if (typeof validation?.check !== 'string') fail(file, `${step.id}: a validation without check`)
        if (
          validation.check === 'field_value_or_absent' &&
          !('value' in validation) &&
          !Array.isArray(validation.allowed_values)
        ) {
          fail(file, `${step.id}: field_value_or_absent needs value or allowed_values`)
        }
      }
    }
  }
  return storyboard as Storyboard
}
