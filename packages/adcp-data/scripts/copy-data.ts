/**
 * The build's data step (tsup `onSuccess`): copies the files this package ships from the repository's
 * `conformance/` folder, the one vendored copy of the official AdCP data, into `dist/adcp/` with the same layout,
 * each checked against `conformance/MANIFEST.sha256` first, and writes their lines of that manifest beside them.
 * A file that differs from the manifest, or one the manifest does not list, fails the build.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** What the package ships, relative to `conformance/`: a file, or a folder ending in `/`. */
export const SHIPPED = ['LICENSE', 'schemas/3.1.19/', 'compliance/3.1.19/', 'openapi/registry.yaml'] as const

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

const isShipped = (file: string) =>
  SHIPPED.some((entry) => (entry.endsWith('/') ? file.startsWith(entry) : file === entry))

function filesBelow(dir: string, base: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return filesBelow(full, base)
    return entry.isFile() ? [path.relative(base, full).split(path.sep).join('/')] : []
  })
}

/**
 * Copies the shipped files of `source` (the repository's `conformance/`) into `target` (`dist/adcp/`) and writes
 * `target/MANIFEST.sha256`; returns how many files it copied.
 *
 * @example copyData() // LICENSE, the 672 schemas, the compliance bundle's files, the registry OpenAPI document
 */
export function copyData(
  source = path.resolve(packageDir, '../../conformance'),
  target = path.join(packageDir, 'dist', 'adcp'),
): number {
  const lines = readFileSync(path.join(source, 'MANIFEST.sha256'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
  const listed = new Map<string, string>()
  for (const line of lines) {
    const match = /^([0-9a-f]{64}) {2}(.+)$/.exec(line)
    if (!match) throw new Error(`conformance/MANIFEST.sha256: malformed line: ${line}`)
    if (isShipped(match[2]!)) listed.set(match[2]!, match[1]!)
  }
  const present = filesBelow(source, source).filter(isShipped)
  const unlisted = present.filter((file) => !listed.has(file))
  if (unlisted.length > 0)
    throw new Error(`conformance/MANIFEST.sha256 does not list ${unlisted.slice(0, 5).join(', ')}`)
  rmSync(target, { recursive: true, force: true })
  for (const [file, digest] of listed) {
    const bytes = readFileSync(path.join(source, file))
    if (createHash('sha256').update(bytes).digest('hex') !== digest)
      throw new Error(`conformance/${file} differs from conformance/MANIFEST.sha256`)
    mkdirSync(path.dirname(path.join(target, file)), { recursive: true })
    writeFileSync(path.join(target, file), bytes)
  }
  // The manifest's own lines, in its order (sorted by path), so `sha256sum -c` checks dist/adcp/ as it checks conformance/.
  const manifest = [...listed].map(([file, digest]) => `${digest}  ${file}`)
  writeFileSync(path.join(target, 'MANIFEST.sha256'), `${manifest.join('\n')}\n`)
  return listed.size
}
