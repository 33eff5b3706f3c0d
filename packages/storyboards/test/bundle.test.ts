/**
 * The vendored AdCP 3.1.19 bundle: every storyboard file loads and plans without error (the counts are pinned, so
 * a new or removed file is noticed), every check kind the bundle uses is one the runner grades, and the load
 * rules of storyboard-schema.yaml reject what they must.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { complianceDir, schemasDir } from '@adwire/adcp-data'
import { describe, expect, it } from 'vitest'
import {
  capabilityGate,
  defaultBundleDir,
  withScenarios,
  CHECK_KINDS,
  loadBundle,
  storyboardGate,
  StoryboardError,
  type AgentProfile,
} from '../src/index.js'

const bundle = loadBundle()

describe('the vendored 3.1.19 bundle', () => {
  it('loads every storyboard file (counts pinned)', () => {
    expect(bundle.version).toBe('3.1.19')
    expect(bundle.entries).toHaveLength(183)
    expect(bundle.entries.filter((entry) => entry.duplicateOf)).toHaveLength(61)
    expect(bundle.documents).toEqual([
      'universal/fictional-entities.yaml',
      'universal/runner-output-contract.yaml',
      'universal/storyboard-schema.yaml',
    ])
    expect(bundle.testKits.size).toBe(14)
    expect(bundle.schemasDir).toMatch(/schemas[/\\]3\.1\.19$/)
  })

  it('plans every storyboard against an agent that claims nothing and one that claims everything', () => {
    const profiles: AgentProfile[] = [
      { tasks: new Set(), capabilities: {}, contracts: new Set(), seededState: false },
      {
        tasks: new Set(
          bundle.entries.flatMap((entry) =>
            entry.storyboard.phases.flatMap((phase) => phase.steps.map((step) => step.task)),
          ),
        ),
        capabilities: {
          supported_protocols: [
            'media_buy',
            'creative',
            'signals',
            'governance',
            'brand',
            'sponsored_intelligence',
          ],
          specialisms: bundle.entries.flatMap((entry) =>
            entry.scope.kind === 'specialism' ? [entry.scope.specialism] : [],
          ),
        },
        contracts: new Set(['webhook_receiver_runner']),
        seededState: true,
      },
    ]
    const [nothing, everything] = profiles.map((profile) =>
      bundle.entries.map((entry) => storyboardGate(entry, profile)),
    )
    expect(nothing!.filter((gate) => gate === undefined).length).toBeGreaterThan(0)
    expect(nothing!.filter((gate) => gate?.reason === 'not_applicable').length).toBeGreaterThan(100)
    const stillGated = everything!.flatMap((gate, index) =>
      gate ? [`${bundle.entries[index]!.key}: ${gate.reason}`] : [],
    )
    // What no single agent profile opens: multi-agent storyboards and capability predicates on fields left undeclared.
    expect(stillGated.filter((line) => !/requirement_unmet|not_applicable|no_phases/.test(line))).toEqual([])
    expect(stillGated.length, stillGated.join('\n')).toBeLessThan(80)
  })

  it('uses only check kinds the runner grades (enumerated from the data)', () => {
    const used = new Set(
      bundle.entries.flatMap((entry) =>
        entry.storyboard.phases.flatMap((phase) =>
          phase.steps.flatMap((step) => (step.validations ?? []).map((v) => v.check)),
        ),
      ),
    )
    expect([...used].filter((kind) => !CHECK_KINDS.includes(kind))).toEqual([])
    expect(used.size).toBe(23)
  })

  it('runs the scenarios a storyboard requires alongside it, each once', () => {
    const plan = withScenarios(bundle, [
      bundle.get('sales_guaranteed'),
      bundle.get('sales_non_guaranteed'),
    ]).map((entry) => entry.storyboard.id)
    expect(plan.slice(0, 5)).toEqual([
      'sales_guaranteed',
      'media_buy_seller/refine_products',
      'media_buy_seller/delivery_reporting',
      'media_buy_seller/measurement_terms_rejected',
      'media_buy_seller/pending_creatives_to_start',
    ])
    expect(new Set(plan).size).toBe(plan.length)
  })

  it('resolves storyboards by key, file and id, preferring protocols/ over its domains/ copy', () => {
    expect(bundle.get('creative_lifecycle').key).toBe('protocols/creative/index')
    expect(bundle.get('domains/creative/index.yaml').duplicateOf).toBe('protocols/creative/index')
    expect(() => bundle.get('nope')).toThrow(expect.objectContaining({ code: 'storyboard_not_found' }))
  })
})

describe('requires_capability on real storyboards', () => {
  const predicates = bundle.entries.flatMap((entry) => [
    ...(entry.storyboard.requires_capability ? [entry.storyboard.requires_capability] : []),
    ...entry.storyboard.phases.flatMap((phase) =>
      phase.requires_capability ? [phase.requires_capability] : [],
    ),
  ])

  it('uses exactly the operators of storyboard-schema.yaml: equals, contains, present', () => {
    const operators = new Set(
      predicates.flatMap((predicate) => Object.keys(predicate).filter((key) => key !== 'path')),
    )
    expect([...operators].sort()).toEqual(['contains', 'equals', 'present'])
  })

  it('grades equals, contains and present', () => {
    const evaluator = bundle
      .get('protocols/creative/scenarios/evaluator_auth')
      .storyboard.phases.find((phase) => phase.requires_capability)!
    expect(
      capabilityGate(evaluator.requires_capability!, { creative: { supports_evaluator: true } }),
    ).toBeUndefined()
    expect(capabilityGate(evaluator.requires_capability!, { creative: {} })).toMatchObject({
      reason: 'not_applicable',
    })
    const contains = predicates.find((predicate) => 'contains' in predicate)!
    const holder = {}
    const set = (value: unknown) => {
      const keys = contains.path.split('.')
      let cursor: Record<string, unknown> = holder
      keys.slice(0, -1).forEach((key) => (cursor = (cursor[key] ??= {}) as Record<string, unknown>))
      cursor[keys.at(-1)!] = value
      return holder
    }
    expect(capabilityGate(contains, set([contains.contains]))).toBeUndefined()
    expect(capabilityGate(contains, set([]))?.detail).toMatch(/contains/)
    const present = predicates.find((predicate) => 'present' in predicate)!
    expect(capabilityGate(present, {})).toEqual(
      present.present ? expect.objectContaining({ reason: 'not_applicable' }) : undefined,
    )
  })
})

describe('where the bundle is found', () => {
  it('is the one @adwire/adcp-data ships, with its schemas, unless ADWIRE_STORYBOARDS_DIR names another', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'adwire-bundle-env-'))
    const before = process.env.ADWIRE_STORYBOARDS_DIR
    try {
      delete process.env.ADWIRE_STORYBOARDS_DIR
      expect(defaultBundleDir()).toBe(complianceDir)
      expect(loadBundle().dir).toBe(complianceDir)
      expect(loadBundle().schemasDir).toBe(schemasDir)
      process.env.ADWIRE_STORYBOARDS_DIR = dir
      expect(defaultBundleDir()).toBe(dir)
    } finally {
      if (before === undefined) delete process.env.ADWIRE_STORYBOARDS_DIR
      else process.env.ADWIRE_STORYBOARDS_DIR = before
    }
  })

  it('gives a copy of the 3.1.19 bundle without schemas beside it the schemas of @adwire/adcp-data', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'adwire-bundle-alone-'))
    cpSync(bundle.dir, dir, { recursive: true })
    expect(loadBundle(dir).schemasDir).toBe(schemasDir)
  })
})

describe('the load rules', () => {
  const copy = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'adwire-bundle-'))
    cpSync(bundle.dir, dir, { recursive: true })
    return dir
  }

  it('rejects requires: [] and a context output with both path and generate, naming the file', () => {
    const dir = copy()
    const file = path.join(dir, 'universal/capability-discovery.yaml')
    const original = readFileSync(file, 'utf8')
    writeFileSync(file, original.replace(/^phases:/m, 'requires: []\nphases:'))
    expect(() => loadBundle(dir)).toThrow(/capability-discovery\.yaml: requires must be a non-empty list/)
    writeFileSync(file, original.replace(/^phases:/m, 'requires_scenarios: [no_such_scenario]\nphases:'))
    expect(() => loadBundle(dir)).toThrow(/requires_scenarios reference "no_such_scenario" did not resolve/)
  })

  it('reads a context output named by `key` (as 3.1.19 storyboards write it) under its name', () => {
    const step = bundle
      .get('media_buy_seller/invalid_transitions')
      .storyboard.phases.flatMap((phase) => phase.steps)
      .find((candidate) => candidate.id === 'get_products_brief')!
    expect(step.context_outputs).toEqual([
      expect.objectContaining({ name: 'product_id', path: 'products[0].product_id' }),
      expect.objectContaining({ name: 'pricing_option_id' }),
    ])
  })

  it('loads again from its parse cache, each load with its own copies', () => {
    const again = loadBundle()
    expect(again.entries).toEqual(bundle.entries)
    const first = bundle.get('capability_discovery').storyboard
    const second = again.get('capability_discovery').storyboard
    expect(second).not.toBe(first)
    second.phases[0]!.steps[0]!.id = 'changed_by_a_caller'
    expect(first.phases[0]!.steps[0]!.id).toBe('get_capabilities')
    expect(loadBundle().get('capability_discovery').storyboard.phases[0]!.steps[0]!.id).toBe(
      'get_capabilities',
    )
  })

  it('fails on a missing bundle with its code', () => {
    try {
      loadBundle('/nonexistent-bundle')
      expect.unreachable()
    } catch (error) {
      expect(StoryboardError.is(error) && error.code).toBe('bundle_invalid')
    }
  })
})
