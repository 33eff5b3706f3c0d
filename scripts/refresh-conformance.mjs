#!/usr/bin/env node
// Refreshes conformance/ from a folder laid out like the official AdCP data bundle
// (schemas/<version>/, compliance/<version>/, test-vectors/, openapi/registry.yaml, LICENSE) and rewrites
// conformance/MANIFEST.sha256. Usage: node scripts/refresh-conformance.mjs <source-folder>
import { createHash } from 'node:crypto'
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const STABLE = '3.1.19'
const BETA = '3.2.0-beta.5'
/** What the packages test against, relative to the source folder. */
const VENDORED = [
  'LICENSE',
  `schemas/${STABLE}`,
  `compliance/${STABLE}`,
  `compliance/${BETA}/test-vectors`,
  'test-vectors',
  'openapi/registry.yaml',
]

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const target = path.join(root, 'conformance')

function listFiles(dir, base = dir) {
  const out = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...listFiles(full, base))
    else if (entry.isFile()) out.push(path.relative(base, full).split(path.sep).join('/'))
  }
  return out
}

export function writeManifest(folder) {
  const files = listFiles(folder)
    .filter((file) => file !== 'MANIFEST.sha256' && file !== 'README.md')
    .sort()
  const lines = files.map((file) => {
    const digest = createHash('sha256')
      .update(readFileSync(path.join(folder, file)))
      .digest('hex')
    return `${digest}  ${file}`
  })
  writeFileSync(path.join(folder, 'MANIFEST.sha256'), lines.join('\n') + '\n')
  return files.length
}

const source = process.argv[2]
if (!source || source === '--help' || source === '-h') {
  console.error(
    'usage: node scripts/refresh-conformance.mjs <folder with schemas/, compliance/, test-vectors/, openapi/>',
  )
  process.exit(source ? 0 : 2)
}
const from = path.resolve(source)
for (const item of VENDORED) {
  if (!existsSync(path.join(from, item))) {
    console.error(`refresh-conformance: ${item} is missing in ${from}`)
    process.exit(1)
  }
}
for (const item of VENDORED) {
  const destination = path.join(target, item)
  rmSync(destination, { recursive: true, force: true })
  mkdirSync(path.dirname(destination), { recursive: true })
  cpSync(path.join(from, item), destination, { recursive: statSync(path.join(from, item)).isDirectory() })
  console.log(`copied ${item}`)
}
const count = writeManifest(target)
console.log(`wrote conformance/MANIFEST.sha256 (${count} files)`)
