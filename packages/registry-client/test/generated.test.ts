import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { generate, OPENAPI_FILE, OUTPUT_FILE } from '../scripts/generate.js'

describe('src/generated/registry.ts', () => {
  it('is what openapi-typescript makes from conformance/openapi/registry.yaml (run the generate script)', async () => {
    expect(OPENAPI_FILE).toMatch(/conformance[\\/]openapi[\\/]registry\.yaml$/)
    expect(readFileSync(OUTPUT_FILE, 'utf8') === (await generate())).toBe(true)
  })
})
