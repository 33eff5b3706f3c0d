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
  type Example,
} from './examples.js'
import { referenceValidate } from './vendored.js'

const { names } = build()
const schemaFor = (shape: string): z.ZodType | undefined => {
  const name = names.get(shape)
  return name ? ((schemas as Record<string, unknown>)[`${name}Schema`] as z.ZodType) : undefined
}
const inScope = (examples: Example[]) => examples.filter((example) => schemaFor(example.shape) !== undefined)

const storyboards = inScope(storyboardExamples()).map((example) => ({
  ...example,
  value: resolveGenerated(example.value),
}))
const fromSchemas = inScope(schemaExamples())
const fromVectors = inScope(vectorExamples())

describe('storyboard samples of the exported shapes', () => {
  const complete = storyboards.filter((example) => !hasRuntimePlaceholder(example.value))
  // Samples holding `$context.*` or `{{...}}` get those values from earlier steps' responses when a runner
  // plays the storyboard; with the placeholder text in place they are not instances of their shape, so they
  // are checked below only for agreeing with the reference validator.
  // The creative tasks' samples are all valid requests. The seller's storyboards also send requests that must
  // be refused (error-compliance, a 3.0-era buyer, ...): those are checked below for the same verdict as Ajv.
  const CREATIVE = new Set([
    'creative/list-creative-formats-request.json#',
    'creative/preview-creative-request.json#',
    'media-buy/build-creative-request.json#',
  ])
  const creative = complete.filter((example) => CREATIVE.has(example.shape))
  it('covers the creative tasks', () => {
    expect(creative.length).toBeGreaterThanOrEqual(20)
    expect(new Set(creative.map((example) => example.shape))).toEqual(CREATIVE)
  })
  it.each(creative.map((example) => [example.source, example] as const))('%s parses', (_source, example) => {
    const result = schemaFor(example.shape)!.safeParse(example.value)
    expect(result.error?.issues ?? []).toEqual([])
  })
})

describe('every in-scope example gets the same verdict as Ajv on the official JSON Schema', () => {
  const all = [...storyboards, ...fromSchemas, ...fromVectors]
  it('has examples from storyboards, schemas and vectors', () => {
    expect(fromSchemas.length).toBeGreaterThan(50)
    expect(fromVectors.length).toBeGreaterThan(50)
    // Both verdicts occur, so agreement is not trivially "everything passes".
    const verdicts = new Set(all.map((example) => referenceValidate(example.shape)(example.value)))
    expect(verdicts).toEqual(new Set([true, false]))
  })
  it.each(all.map((example) => [`${example.source} as ${example.shape}`, example] as const))(
    '%s',
    (_name, example) => {
      const reference = referenceValidate(example.shape)
      const expected = reference(example.value) as boolean
      const result = schemaFor(example.shape)!.safeParse(example.value)
      expect(
        { valid: result.success, issues: result.error?.issues.slice(0, 3) },
        `Ajv says ${expected ? 'valid' : `invalid: ${JSON.stringify(reference.errors?.slice(0, 2))}`}`,
      ).toMatchObject({ valid: expected })
    },
  )
})
