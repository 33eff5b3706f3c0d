/**
 * The built data (dist/adcp/, what the tarball ships) against the repository's one vendored copy: the same bytes
 * and the same manifest lines as conformance/, every 3.1.19 schema, the whole 3.1.19 compliance bundle (test kits
 * included), the registry OpenAPI document, the AdCP project's license.
 */
import { readFileSync } from 'node:fs'
import { conformancePath, listConformanceFiles } from '@adwire/conformance'
import { describe, expect, it } from 'vitest'
import {
  ADCP_VERSION,
  adcpDataPath,
  complianceDir,
  listSchemaFiles,
  readSchema,
  registryOpenApiFile,
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
      2 + listSchemaFiles().length + listConformanceFiles(`compliance/${ADCP_VERSION}`).length,
    )
  })

  it("carries conformance/'s lines for LICENSE, schemas/3.1.19/, compliance/3.1.19/ and the registry OpenAPI, and no other", () => {
    const shipped = manifestLines(adcpDataPath('MANIFEST.sha256'))
    const vendored = manifestLines(conformancePath('MANIFEST.sha256')).filter((line) => {
      const file = line.slice(66)
      return (
        file === 'LICENSE' ||
        file === 'openapi/registry.yaml' ||
        file.startsWith(`schemas/${ADCP_VERSION}/`) ||
        file.startsWith(`compliance/${ADCP_VERSION}/`)
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

  it('holds the 3.1.19 compliance bundle and the registry OpenAPI document', () => {
    expect(complianceDir).toBe(adcpDataPath('compliance', ADCP_VERSION))
    expect(JSON.parse(readFileSync(`${complianceDir}/index.json`, 'utf8'))).toMatchObject({
      adcp_version: ADCP_VERSION,
    })
    expect(readFileSync(`${complianceDir}/universal/capability-discovery.yaml`, 'utf8')).toMatch(
      /^id: capability_discovery$/m,
    )
    expect(readFileSync(registryOpenApiFile, 'utf8')).toMatch(/^openapi: 3\.1\.\d+$/m)
  })
})
