/**
 * Loads an AdCP compliance bundle (`compliance/<version>/`: universal/, protocols/, domains/, specialisms/,
 * test-kits/) from a directory and checks every storyboard against the load rules of
 * `universal/storyboard-schema.yaml`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { ADCP_VERSION as DATA_VERSION, complianceDir, schemasDir as dataSchemasDir } from '@adwire/adcp-data'
import { parse } from 'yaml'
import { StoryboardError } from './errors.js'
import { validateStoryboard } from './load-rules.js'
import { suggestStoryboards } from './suggest.js'
import type { Storyboard, TestKit } from './types.js'

/** The AdCP release this runner implements. */
export const ADCP_VERSION = '3.1.19'

/** Where a storyboard sits in the bundle, which decides whom it applies to. */
export type StoryboardScope =
  { kind: 'universal' } | { kind: 'protocol'; protocol: string } | { kind: 'specialism'; specialism: string }

/** One storyboard file of the bundle. */
export interface BundleEntry {
  /** The bundle-relative file path without `.yaml` (`protocols/creative/index`): unique. */
  readonly key: string
  /** The bundle-relative file path. */
  readonly file: string
  readonly storyboard: Storyboard
  readonly scope: StoryboardScope
  /** A `domains/` file identical to its `protocols/` twin (the bundle ships both). */
  readonly duplicateOf?: string
}

/** A loaded bundle. */
export interface Bundle {
  readonly dir: string
  /** The AdCP version the bundle names (`index.json` adcp_version, else the folder name). */
  readonly version: string
  /**
   * The JSON Schemas of that version (`schemas/<version>` beside `compliance/`, else those of
   * `@adwire/adcp-data` for its version), when there are any.
   */
  readonly schemasDir: string | undefined
  readonly entries: readonly BundleEntry[]
  /** YAML files that are not storyboards (the format documents, reference data). */
  readonly documents: readonly string[]
  /** Test kits by bundle-relative path (`test-kits/acme-outdoor.yaml`). */
  readonly testKits: ReadonlyMap<string, TestKit>
  /** The entry for a key (`protocols/creative/index`), a file, or a storyboard id (first non-duplicate). */
  get(ref: string): BundleEntry
  find(ref: string): BundleEntry | undefined
}

function walk(dir: string, base = dir): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...walk(full, base))
    else if (entry.isFile() && entry.name.endsWith('.yaml')) {
      out.push(path.relative(base, full).split(path.sep).join('/'))
    }
  }
  return out.sort()
}

function scopeOf(file: string): StoryboardScope {
  const [top, second] = file.split('/')
  if ((top === 'protocols' || top === 'domains') && second) return { kind: 'protocol', protocol: second }
  if (top === 'specialisms' && second) return { kind: 'specialism', specialism: second }
  return { kind: 'universal' }
}

/**
 * The official AdCP 3.1.19 compliance bundle that `@adwire/adcp-data` ships (`compliance/3.1.19/` of its data,
 * wherever the package is installed), or `$ADWIRE_STORYBOARDS_DIR` when set.
 * @example defaultBundleDir() // '/…/node_modules/@adwire/adcp-data/dist/adcp/compliance/3.1.19'
 */
export function defaultBundleDir(): string {
  const fromEnv = typeof process !== 'undefined' ? process.env.ADWIRE_STORYBOARDS_DIR : undefined
  return fromEnv ? path.resolve(fromEnv) : complianceDir
}

/**
 * The JSON Schemas of a bundle's version: `schemas/<version>/` two levels above the bundle, as the AdCP release
 * lays them out, else those `@adwire/adcp-data` ships when the version is theirs.
 */
function schemasFor(root: string, version: string): string | undefined {
  const beside = path.join(root, '..', '..', 'schemas', version)
  if (existsSync(beside)) return beside
  return version === DATA_VERSION ? dataSchemasDir : undefined
}

/**
 * The parsed YAML of each file read so far, with the text it was parsed from: a process that loads the bundle
 * again (the CLI's commands, a test file after another) skips the parse, the bulk of a load, when the file is
 * unchanged. Each load gets its own copy, so a caller that changes a storyboard changes nobody else's.
 */
const parsed = new Map<string, { text: string; doc: unknown }>()

function readYaml(dir: string, file: string): unknown {
  const full = path.join(dir, file)
  try {
    const text = readFileSync(full, 'utf8')
    const known = parsed.get(full)
    if (known?.text === text) return structuredClone(known.doc)
    const doc: unknown = parse(text)
    parsed.set(full, { text, doc: structuredClone(doc) })
    return doc
  } catch (error) {
    throw new StoryboardError('bundle_invalid', `${file}: not YAML: ${(error as Error).message}`, {
      cause: error,
    })
  }
}

/**
 * Loads and checks every storyboard of a bundle directory.
 * @example
 * const bundle = loadBundle() // the 3.1.19 bundle of @adwire/adcp-data
 * bundle.get('capability_discovery').storyboard.phases[0].steps[0].task // 'get_adcp_capabilities'
 */
export function loadBundle(dir: string = defaultBundleDir()): Bundle {
  const root = path.resolve(dir)
  if (!existsSync(path.join(root, 'universal'))) {
    throw new StoryboardError('bundle_invalid', `${root} is not a compliance bundle (no universal/ folder)`)
  }
  const index = existsSync(path.join(root, 'index.json'))
    ? (JSON.parse(readFileSync(path.join(root, 'index.json'), 'utf8')) as { adcp_version?: string })
    : {}
  const version = index.adcp_version ?? path.basename(root)
  const entries: BundleEntry[] = []
  const documents: string[] = []
  const testKits = new Map<string, TestKit>()
  const texts = new Map<string, string>()
  for (const file of walk(root)) {
    if (file.startsWith('test-vectors/')) continue
    const doc = readYaml(root, file)
    if (file.startsWith('test-kits/')) {
      testKits.set(file, (doc ?? {}) as TestKit)
      continue
    }
    if (doc === null || typeof doc !== 'object' || !('phases' in doc)) {
      documents.push(file)
      continue
    }
    const storyboard = validateStoryboard(file, doc)
    const text = readFileSync(path.join(root, file), 'utf8')
    texts.set(file, text)
    entries.push({ key: file.replace(/\.yaml$/, ''), file, storyboard, scope: scopeOf(file) })
  }
  for (const [index, entry] of entries.entries()) {
    const twin = entry.file.replace(/^domains\//, 'protocols/')
    if (twin !== entry.file && texts.get(twin) === texts.get(entry.file)) {
      entries[index] = { ...entry, duplicateOf: twin.replace(/\.yaml$/, '') }
    }
  }
  const ids = new Set(entries.map((entry) => entry.storyboard.id))
  for (const entry of entries) {
    for (const scenario of entry.storyboard.requires_scenarios ?? []) {
      if (!ids.has(scenario)) {
        throw new StoryboardError(
          'bundle_invalid',
          `${entry.file}: requires_scenarios reference "${scenario}" did not resolve against the source tree`,
        )
      }
    }
  }
  const find = (ref: string): BundleEntry | undefined => {
    const key = ref.replace(/\.yaml$/, '')
    return (
      entries.find((entry) => entry.key === key) ??
      entries.find((entry) => entry.storyboard.id === ref && !entry.duplicateOf) ??
      entries.find((entry) => entry.storyboard.id === ref)
    )
  }
  return {
    dir: root,
    version,
    schemasDir: schemasFor(root, version),
    entries,
    documents,
    testKits,
    find,
    get(ref) {
      const entry = find(ref)
      if (entry) return entry
      const suggestions = suggestStoryboards(entries, ref)
      const hint = suggestions.length
        ? `; did you mean ${suggestions.map((id) => `"${id}"`).join(' or ')}?`
        : ''
      throw new StoryboardError('storyboard_not_found', `no storyboard "${ref}" in ${root}${hint}`)
    },
  }
}
