import { describe, expect, it } from 'vitest'
import {
  ADCP_BETA_VERSION,
  ADCP_STABLE_VERSION,
  listConformanceFiles,
  readConformanceJson,
  verifyManifest,
} from './index.js'

describe('conformance/MANIFEST.sha256', () => {
  const result = verifyManifest()

  it('lists every vendored file, and every listed file is present and unchanged', () => {
    expect(result.changed, 'files whose bytes differ from the manifest').toEqual([])
    expect(result.missing, 'files listed in the manifest but absent').toEqual([])
    expect(result.unlisted, 'files present but not in the manifest').toEqual([])
    expect(result.checked).toBeGreaterThan(1000)
  })

  it('covers what the packages test against', () => {
    const vectors = listConformanceFiles(`compliance/${ADCP_STABLE_VERSION}/test-vectors/webhook-signing`)
    expect(vectors.filter((file) => file.startsWith('positive/'))).toHaveLength(8)
    expect(vectors.filter((file) => file.startsWith('negative/'))).toHaveLength(21)
    expect(listConformanceFiles(`compliance/${ADCP_BETA_VERSION}/test-vectors`).length).toBeGreaterThan(0)
    expect(readConformanceJson('test-vectors/webhook-hmac-sha256.json')).toBeTypeOf('object')
    expect(readConformanceJson(`schemas/${ADCP_STABLE_VERSION}/core/format.json`).$id).toBe(
      `/schemas/${ADCP_STABLE_VERSION}/core/format.json`,
    )
  })
})
