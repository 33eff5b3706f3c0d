/** The build's data step refuses what the manifest does not vouch for: a changed file, an unlisted one. */
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { copyData } from '../scripts/copy-data.js'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** A conformance-like folder: the files given, and a manifest of `listed` of them. */
function vendored(files: Record<string, string>, listed = Object.keys(files)) {
  const source = mkdtempSync(path.join(tmpdir(), 'adcp-data-source-'))
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(source, file)), { recursive: true })
    writeFileSync(path.join(source, file), text)
  }
  const lines = listed.sort().map((file) => `${sha256(files[file]!)}  ${file}`)
  writeFileSync(path.join(source, 'MANIFEST.sha256'), `${lines.join('\n')}\n`)
  return { source, target: mkdtempSync(path.join(tmpdir(), 'adcp-data-target-')) }
}

const files = {
  LICENSE: 'Apache License 2.0',
  'schemas/3.1.19/core/format.json': '{"$id":"/schemas/3.1.19/core/format.json"}',
  'compliance/3.1.19/test-kits/kit.yaml': 'auth:\n  api_key: "demo-kit-v1"\n',
  'compliance/3.1.19/universal/idempotency.yaml': 'id: idempotency\n',
  'compliance/3.2.0-beta.5/test-vectors/beta.json': '{}',
  'openapi/registry.yaml': 'openapi: 3.1.0\n',
  'test-vectors/other.json': '{}',
}

describe('copyData', () => {
  it('copies the shipped files and their manifest lines, nothing else', () => {
    const { source, target } = vendored(files)
    expect(copyData(source, target)).toBe(5)
    expect(readFileSync(path.join(target, 'compliance/3.1.19/test-kits/kit.yaml'), 'utf8')).toBe(
      files['compliance/3.1.19/test-kits/kit.yaml'],
    )
    expect(readFileSync(path.join(target, 'MANIFEST.sha256'), 'utf8')).toBe(
      [
        'LICENSE',
        'compliance/3.1.19/test-kits/kit.yaml',
        'compliance/3.1.19/universal/idempotency.yaml',
        'openapi/registry.yaml',
        'schemas/3.1.19/core/format.json',
      ]
        .map((file) => `${sha256(files[file as keyof typeof files])}  ${file}`)
        .join('\n') + '\n',
    )
  })

  it('fails on a file whose bytes differ from the manifest', () => {
    const { source, target } = vendored(files)
    writeFileSync(path.join(source, 'schemas/3.1.19/core/format.json'), '{}')
    expect(() => copyData(source, target)).toThrow(
      'conformance/schemas/3.1.19/core/format.json differs from conformance/MANIFEST.sha256',
    )
  })

  it('fails on a shipped file the manifest does not list', () => {
    const { source, target } = vendored(
      files,
      Object.keys(files).filter((file) => file !== 'compliance/3.1.19/test-kits/kit.yaml'),
    )
    expect(() => copyData(source, target)).toThrow(
      'conformance/MANIFEST.sha256 does not list compliance/3.1.19/test-kits/kit.yaml',
    )
  })
})
