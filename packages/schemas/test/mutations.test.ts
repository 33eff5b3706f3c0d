import { describe, expect, it } from 'vitest'
import type { z } from 'zod'
import { build } from '../scripts/generate.js'
import * as schemas from '../src/index.js'
import {
  hasRuntimePlaceholder,
  resolveGenerated,
  schemaExamples,
  storyboardExamples,
  vectorExamples,
} from './examples.js'
import { referenceValidate } from './vendored.js'

// Valid examples bent in small ways (a key removed, a value of the wrong type, an unknown key added, a
// string emptied, an array emptied): each mutant must get the same verdict from the generated zod schema
// as from Ajv on the official JSON Schema. This exercises required, additionalProperties, types, lengths,
// patterns, enums, oneOf and if/then far beyond the examples themselves.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
const { names } = build()

function* mutants(value: Json, path: string[] = []): Generator<[string, (root: Json) => Json]> {
  const at = path.join('.') || '(root)'
  const replace = (next: Json) => (root: Json) => setAt(root, path, next)
  if (path.length > 0) {
    yield [`${at} = null`, replace(null)]
    yield [`${at} = 7`, replace(7)]
    if (typeof value !== 'string') yield [`${at} = "x"`, replace('x')]
  }
  if (typeof value === 'string') yield [`${at} = ""`, replace('')]
  if (Array.isArray(value)) {
    yield [`${at} = []`, replace([])]
    for (let index = 0; index < Math.min(value.length, 2); index += 1)
      yield* mutants(value[index]!, [...path, String(index)])
  } else if (value !== null && typeof value === 'object') {
    yield [`${at}.zz_unknown = 1`, replace({ ...value, zz_unknown: 1 })]
    for (const key of Object.keys(value)) {
      const { [key]: _removed, ...rest } = value
      yield [`${at} without ${key}`, replace(rest)]
      yield* mutants(value[key]!, [...path, key])
    }
  }
}

function setAt(root: Json, path: string[], next: Json): Json {
  if (path.length === 0) return next
  const [head, ...tail] = path as [string, ...string[]]
  if (Array.isArray(root))
    return root.map((item, index) => (String(index) === head ? setAt(item, tail, next) : item))
  const object = root as Record<string, Json>
  return { ...object, [head]: setAt(object[head]!, tail, next) }
}

const seeds = [
  ...storyboardExamples().map((example) => ({ ...example, value: resolveGenerated(example.value) })),
  ...schemaExamples(),
  ...vectorExamples(),
]
  .filter((example) => names.has(example.shape) && !hasRuntimePlaceholder(example.value))
  .filter((example) => referenceValidate(example.shape)(example.value))

describe('mutants of valid examples: zod and Ajv agree', () => {
  it('has seeds', () => expect(seeds.length).toBeGreaterThan(50))
  it.each(seeds.map((seed) => [`${seed.source} as ${seed.shape}`, seed] as const))('%s', (_name, seed) => {
    const schema = (schemas as Record<string, unknown>)[`${names.get(seed.shape)}Schema`] as z.ZodType
    const reference = referenceValidate(seed.shape)
    const disagreements: string[] = []
    let count = 0
    for (const [label, mutate] of mutants(seed.value as Json)) {
      if (++count > 400) break
      const mutant = mutate(seed.value as Json)
      const expected = reference(mutant) as boolean
      const actual = schema.safeParse(mutant).success
      if (expected !== actual)
        disagreements.push(
          `${label}: Ajv ${expected ? 'accepts' : 'rejects'}, zod ${actual ? 'accepts' : 'rejects'}`,
        )
    }
    if (process.env.DUMP) console.log(`DIS ${seed.source}\n${disagreements.join('\n')}`)
    expect(disagreements).toEqual([])
  })
})
