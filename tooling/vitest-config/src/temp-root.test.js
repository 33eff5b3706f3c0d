import { tmpdir } from 'node:os'
import { basename, dirname } from 'node:path'
import { describe, expect, it } from 'vitest'

describe('the test run temporary folder', () => {
  it('os.tmpdir() is this run’s own folder, which the global setup removes at the end', () => {
    expect(basename(tmpdir())).toMatch(/^adwire-test-/)
    expect(dirname(tmpdir())).not.toBe(tmpdir())
  })
})
