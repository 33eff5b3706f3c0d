#!/usr/bin/env node
// `pnpm release:check`: proves the libraries would publish as they are, without touching the working tree.
// Copies the workspace (the files git tracks or would track, and each package's built dist/) to a temporary
// folder, runs `changeset version` there (every pending changeset applied: versions bumped, CHANGELOG.md
// written, the changesets consumed), then `pnpm -r publish --dry-run --no-git-checks`, and checks that every
// public package under packages/ would publish at its new version, and that its tarball (`pnpm pack`) holds its
// README and every file its exports map and bin name, with the adwire dependencies at their released versions
// (no `workspace:` range left). Needs `pnpm build` first. Usage: node scripts/release-check.mjs [--keep]
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const keep = process.argv.includes('--keep')
const started = performance.now()
const copy = mkdtempSync(path.join(tmpdir(), 'adwire-release-check-'))
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`

const run = (command, args, what) => {
  const result = spawnSync(command, args, {
    cwd: copy,
    encoding: 'utf8',
    env: { ...process.env, npm_config_loglevel: 'error', CI: '1' },
  })
  if (result.status !== 0) {
    throw new Error(`${what} failed (exit ${result.status}):\n${result.stdout}${result.stderr}`)
  }
  return `${result.stdout}${result.stderr}`
}
/** The string values of a manifest field (exports conditions, bin), not its keys. */
const leaves = (value) =>
  typeof value === 'string' ? [value] : Object.values(value ?? {}).flatMap((inner) => leaves(inner))
const manifestOf = (dir) => JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'))

const problems = []
try {
  // 1. The copy: what git tracks or would track (no node_modules, no local data), and the built dist/ folders.
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  })
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`)
  const files = listed.stdout
    .split('\0')
    .filter((file) => file !== '' && !file.startsWith('conformance/') && existsSync(path.join(root, file)))
  for (const file of files) {
    mkdirSync(path.dirname(path.join(copy, file)), { recursive: true })
    cpSync(path.join(root, file), path.join(copy, file))
  }
  const libraries = readdirSync(path.join(root, 'packages'))
    .map((name) => path.join('packages', name))
    .filter((dir) => existsSync(path.join(root, dir, 'package.json')))
    .map((dir) => ({ dir, before: manifestOf(path.join(root, dir)) }))
    .filter(({ before }) => before.private !== true)
  for (const { dir, before } of libraries) {
    if (!existsSync(path.join(root, dir, 'dist')))
      throw new Error(`${before.name} has no dist/: run pnpm build first`)
    cpSync(path.join(root, dir, 'dist'), path.join(copy, dir, 'dist'), { recursive: true })
  }
  const pending = readdirSync(path.join(copy, '.changeset')).filter(
    (f) => f.endsWith('.md') && f !== 'README.md',
  )
  console.log(
    `release:check: ${files.length} files copied, ${pending.length} pending changesets (${elapsed()})`,
  )

  // 2. changeset version, with the workspace's own @changesets/cli.
  const changeset = path.join(root, 'node_modules', '.bin', 'changeset')
  run(changeset, ['version'], 'changeset version')
  const left = readdirSync(path.join(copy, '.changeset')).filter(
    (f) => f.endsWith('.md') && f !== 'README.md',
  )
  if (left.length > 0) problems.push(`changeset version left ${left.length} changesets: ${left.join(', ')}`)
  for (const library of libraries) {
    library.after = manifestOf(path.join(copy, library.dir))
    const changelog = path.join(copy, library.dir, 'CHANGELOG.md')
    const bumped = library.after.version !== library.before.version
    console.log(`  ${library.before.name} ${library.before.version} → ${library.after.version}`)
    if (bumped && !readFileSync(changelog, 'utf8').includes(`## ${library.after.version}`)) {
      problems.push(`${library.before.name}: CHANGELOG.md has no ${library.after.version} section`)
    }
  }
  console.log(`release:check: changeset version done (${elapsed()})`)

  // 3. pnpm -r publish --dry-run: every public package would go to the registry at its new version.
  const output = run(
    'pnpm',
    ['-r', 'publish', '--dry-run', '--no-git-checks', '--access', 'public'],
    'pnpm -r publish --dry-run',
  )
  const versions = new Map(libraries.map(({ before, after }) => [before.name, after.version]))
  const tarballs = path.join(copy, '.tarballs')
  mkdirSync(tarballs)
  for (const { before, after, dir } of libraries) {
    const tag = `${before.name}@${after.version}`
    if (!output.includes(tag)) problems.push(`${tag} is not in the publish dry run`)
    // 4. What the tarball holds: the manifest as published (workspace: ranges rewritten to the new versions),
    // the README and every file the exports map and bin name.
    const packed = JSON.parse(
      run('pnpm', ['--dir', dir, 'pack', '--json', '--pack-destination', tarballs], `pnpm pack of ${tag}`),
    )
    const files = new Set(packed.files.map((file) => file.path))
    const targets = leaves([after.exports, after.bin, after.main, after.types]).filter(
      (t) => t !== './package.json',
    )
    for (const file of ['README.md', ...targets.map((target) => path.posix.normalize(target))]) {
      if (!files.has(file)) problems.push(`${tag}: ${file} is not in its tarball`)
    }
    const manifest = JSON.parse(
      run(
        'tar',
        ['-xzOf', path.resolve(dir, packed.filename), 'package/package.json'],
        `reading ${tag}'s manifest`,
      ),
    )
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
      for (const [name, range] of Object.entries(manifest[field] ?? {})) {
        if (String(range).startsWith('workspace:')) problems.push(`${tag}: ${field} ${name} is ${range}`)
        else if (versions.has(name) && !String(range).includes(versions.get(name))) {
          problems.push(`${tag}: ${field} ${name} is ${range}, not the released ${versions.get(name)}`)
        }
      }
    }
  }
  console.log(`release:check: pnpm -r publish --dry-run done (${elapsed()})`)
} catch (error) {
  problems.push(error instanceof Error ? error.message : String(error))
} finally {
  if (keep) console.log(`release:check: the copy is kept in ${copy}`)
  else rmSync(copy, { recursive: true, force: true })
}
for (const problem of problems) console.error(`release:check: ${problem}`)
if (problems.length > 0) process.exit(1)
console.log(`release:check: every public package would publish as it is (${elapsed()})`)
