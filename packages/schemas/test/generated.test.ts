import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
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

  it('emits a discriminated union where a required constant tells the alternatives apart', () => {
    const union = schemas.AssetSchema as unknown as z.ZodDiscriminatedUnion
    expect(union).toBeInstanceOf(z.ZodDiscriminatedUnion)
    expect(union.def.discriminator).toBe('asset_type')
    expect(union.options).toHaveLength(20)
    // Every `oneOf` that is still a plain union (checked alternative by alternative) has no such property.
    expect(generate()).not.toMatch(/oneOf\(\[\s*ImageAssetSchema/)
    const result = schemas.AssetSchema.safeParse({ asset_type: 'gif', url: 'https://cdn.example/a.gif' })
    expect(result.success).toBe(false)
    expect(result.error?.issues).toHaveLength(1)
    expect(result.error?.issues[0]?.path).toEqual(['asset_type'])
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
