/**
 * The built data (dist/adcp/, what the tarball ships) against the repository's one vendored copy: the same bytes
 * and the same manifest lines as conformance/, every 3.1.19 schema and test kit, the AdCP project's license.
 */
import { readFileSync } from 'node:fs'
import { conformancePath, listConformanceFiles } from '@adwire/conformance'
import { describe, expect, it } from 'vitest'
import {
  ADCP_VERSION,
  adcpDataPath,
  listSchemaFiles,
  readSchema,
  schemasDir,
  testKitsDir,
  verifyAdcpData,
} from './index.js'

const manifestLines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean)

describe('@adwire/adcp-data', () => {
  it('is intact: every file its manifest lists, unchanged, and nothing else', () => {
    const check = verifyAdcpData()
    expect(check).toMatchObject({ changed: [], missing: [], unlisted: [] })
    expect(check.checked).toBe(
      1 + listSchemaFiles().length + listConformanceFiles(`compliance/${ADCP_VERSION}/test-kits`).length,
    )
  })

  it("carries conformance/'s lines for LICENSE, schemas/3.1.19/ and the test kits, and no other", () => {
    const shipped = manifestLines(adcpDataPath('MANIFEST.sha256'))
    const vendored = manifestLines(conformancePath('MANIFEST.sha256')).filter((line) => {
      const file = line.slice(66)
      return (
        file === 'LICENSE' ||
        file.startsWith(`schemas/${ADCP_VERSION}/`) ||
        file.startsWith(`compliance/${ADCP_VERSION}/test-kits/`)
      )
    })
    expect(shipped).toEqual(vendored)
    expect(readFileSync(adcpDataPath('LICENSE'), 'utf8')).toBe(
      readFileSync(conformancePath('LICENSE'), 'utf8'),
    )
  })

  it('lists and reads the 3.1.19 schemas by the paths their $id names', () => {
    const files = listSchemaFiles()
    expect(files).toEqual(listConformanceFiles(`schemas/${ADCP_VERSION}`, (file) => file.endsWith('.json')))
    expect(files).toContain('media-buy/create-media-buy-request.json')
    expect(readSchema('media-buy/create-media-buy-request.json').$id).toBe(
      '/schemas/3.1.19/media-buy/create-media-buy-request.json',
    )
    expect(schemasDir).toBe(adcpDataPath('schemas', '3.1.19'))
    expect(() => readSchema('media-buy/no-such-request.json')).toThrow(/ENOENT/)
  })

  it('holds the compliance test kits', () => {
    expect(readFileSync(`${testKitsDir}/acme-outdoor.yaml`, 'utf8')).toMatch(
      /api_key:\s*"demo-acme-outdoor-v\d+"/,
    )
  })
})
