import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { generate, OUTPUT_FILE } from '../scripts/generate.js'
import { ROOT_SHAPES } from '../scripts/roots.js'
import * as schemas from '../src/index.js'

describe('src/generated/schemas.ts', () => {
  it('is what the generator makes from the vendored JSON Schemas (run `pnpm schemas:generate`)', () => {
    expect(readFileSync(OUTPUT_FILE, 'utf8') === generate()).toBe(true)
  })

  it('exports a schema for every root shape', () => {
    for (const root of ROOT_SHAPES) {
      expect(schemas, root.file).toHaveProperty(`${root.name}Schema`)
    }
  })

  it('has all 92 AdCP 3.1.19 error codes and the task and media-buy statuses', () => {
    expect(schemas.ErrorCodeSchema.options).toHaveLength(92)
    expect(schemas.ErrorCodeSchema.options).toEqual(
      expect.arrayContaining(['INVALID_REQUEST', 'RATE_LIMITED', 'AUTH_MISSING']),
    )
    // INVALID_FORMAT_ID is not in the 3.1.19 enum; the vocabulary is open and parseFormatId raises it (see errors.ts).
    expect(schemas.ErrorCodeSchema.options).not.toContain('INVALID_FORMAT_ID')
    expect(schemas.TaskStatusSchema.options).toEqual([
      'submitted',
      'working',
      'input-required',
      'completed',
      'canceled',
      'failed',
      'rejected',
      'auth-required',
      'unknown',
    ])
    expect(schemas.MediaBuyStatusSchema.options).toEqual(
      expect.arrayContaining(['active', 'paused', 'completed', 'canceled', 'rejected']),
    )
  })
})
