/**
 * Readers for the vendored AdCP data in `conformance/` at the repository root. Test suites use these
 * instead of relative paths so that every suite reads the same, manifest-checked copy.
 */
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The AdCP release the packages target. */
export const ADCP_STABLE_VERSION = '3.1.19'
/** The pre-release whose receiver rules and vectors are also tested. */
export const ADCP_BETA_VERSION = '3.2.0-beta.5'

/** Absolute path of the `conformance/` folder. */
export const conformanceRoot = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../conformance',
)

/**
 * Absolute path of a file or folder inside `conformance/`.
 * @param {...string} segments
 */
export function conformancePath(...segments) {
  return path.join(conformanceRoot, ...segments)
}

/**
 * Parses a JSON file inside `conformance/`.
 * @param {...string} segments
 * @returns {any}
 */
export function readConformanceJson(...segments) {
  return JSON.parse(readFileSync(conformancePath(...segments), 'utf8'))
}

/**
 * Every file below a folder of `conformance/`, as paths relative to that folder with `/` separators, sorted.
 * @param {string} folder relative to `conformance/`
 * @param {(file: string) => boolean} [filter]
 * @returns {string[]}
 */
export function listConformanceFiles(folder, filter = () => true) {
  const base = conformancePath(folder)
  /** @type {string[]} */
  const out = []
  const walk = (/** @type {string} */ dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.isFile()) out.push(path.relative(base, full).split(path.sep).join('/'))
    }
  }
  walk(base)
  return out.filter(filter).sort()
}

/**
 * Compares `conformance/` with `conformance/MANIFEST.sha256`.
 * @returns {{ checked: number, changed: string[], missing: string[], unlisted: string[] }}
 */
export function verifyManifest() {
  const lines = readFileSync(conformancePath('MANIFEST.sha256'), 'utf8').split('\n').filter(Boolean)
  /** @type {Map<string, string>} */
  const expected = new Map()
  for (const line of lines) {
    const match = /^([0-9a-f]{64}) {2}(.+)$/.exec(line)
    if (!match) throw new Error(`MANIFEST.sha256: malformed line: ${line}`)
    expected.set(/** @type {string} */ (match[2]), /** @type {string} */ (match[1]))
  }
  const present = new Set(
    listConformanceFiles('.', (file) => file !== 'MANIFEST.sha256' && file !== 'README.md'),
  )
  const changed = []
  const missing = []
  for (const [file, digest] of expected) {
    if (!present.has(file)) {
      missing.push(file)
      continue
    }
    const actual = createHash('sha256')
      .update(readFileSync(conformancePath(file)))
      .digest('hex')
    if (actual !== digest) changed.push(file)
  }
  const unlisted = [...present].filter((file) => !expected.has(file))
  return { checked: expected.size, changed, missing, unlisted }
}
