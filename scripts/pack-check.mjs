#!/usr/bin/env node
// CI step (`.ci/run`, section "pack"): every public package works when installed alone. Packs each package
// under packages/ that is not private (`pnpm pack`, which turns `workspace:*` into versions), installs the
// tarballs with npm into an empty temporary project (third-party dependencies from the registry; the adwire
// ones from the tarballs through `overrides`), then imports every entry point of its `exports` map in Node
// (ESM), runs every `bin` with `--help`, runs the package's own check of its installed copy when it has one
// (`test/installed.mjs`, never packed: what an import alone does not show, e.g. the data files a package reads
// at run time), and type-checks an import of every entry point with the workspace's TypeScript (module and
// resolution `nodenext`, `skipLibCheck` off so that our declarations are checked). Install scripts are skipped
// (better-sqlite3 13 ships its prebuilt bindings in the package). Needs `pnpm build` first.
// Usage: node scripts/pack-check.mjs [--keep]
import { spawnSync } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  mkdirSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const keep = process.argv.includes('--keep')
const work = mkdtempSync(path.join(tmpdir(), 'adwire-pack-check-'))
const tarballs = path.join(work, 'tarballs')
const project = path.join(work, 'project')
mkdirSync(tarballs)
mkdirSync(project)

const run = (command, args, cwd, what) => {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_loglevel: 'error' },
  })
  if (result.status !== 0) {
    throw new Error(`${what} failed (exit ${result.status}):\n${result.stdout}${result.stderr}`)
  }
  return result.stdout
}

const packages = readdirSync(path.join(root, 'packages'))
  .map((name) => path.join(root, 'packages', name))
  .filter((dir) => existsSync(path.join(dir, 'package.json')))
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) }))
  .filter(({ manifest }) => manifest.private !== true)

const failures = []
try {
  for (const { dir, manifest } of packages) {
    if (!existsSync(path.join(dir, 'dist')))
      throw new Error(`${manifest.name} has no dist/: run pnpm build first`)
    const before = new Set(readdirSync(tarballs))
    run('pnpm', ['pack', '--pack-destination', tarballs], dir, `pnpm pack of ${manifest.name}`)
    const tarball = readdirSync(tarballs).find((file) => !before.has(file))
    if (tarball === undefined) throw new Error(`pnpm pack of ${manifest.name} wrote no tarball`)
    manifest.tarball = `file:../tarballs/${tarball}`
  }
  const dependencies = Object.fromEntries(packages.map(({ manifest }) => [manifest.name, manifest.tarball]))
  const overrides = Object.fromEntries(packages.map(({ manifest }) => [manifest.name, `$${manifest.name}`]))
  // An optional peer (fastify for `@adwire/adapters/fastify`) is what a user of that entry point has installed
  // beside the package: the project gets it too, at the version the workspace tests with.
  const optionalPeers = Object.fromEntries(
    packages.flatMap(({ manifest }) =>
      Object.entries(manifest.peerDependencies ?? {})
        .filter(([name]) => manifest.peerDependenciesMeta?.[name]?.optional === true)
        .map(([name, range]) => [name, manifest.devDependencies?.[name] ?? range]),
    ),
  )
  writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify(
      {
        name: 'adwire-pack-check',
        private: true,
        type: 'module',
        // What a TypeScript user of Node adds beside the packages; nothing else of the workspace is visible.
        dependencies: { ...optionalPeers, ...dependencies, '@types/node': '^22.20.5' },
        overrides,
      },
      null,
      2,
    ),
  )
  console.log(`pack-check: installing ${packages.length} tarballs into ${project}`)
  run(
    'npm',
    ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--no-package-lock'],
    project,
    'npm install',
  )

  const typeLines = []
  for (const { dir, manifest } of packages) {
    const entries = Object.keys(manifest.exports ?? { '.': {} }).filter((key) => !key.endsWith('.json'))
    for (const [index, entry] of entries.entries()) {
      const specifier = entry === '.' ? manifest.name : `${manifest.name}/${entry.slice(2)}`
      const imported = spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const m = await import(${JSON.stringify(specifier)}); console.log(Object.keys(m).length)`,
        ],
        { cwd: project, encoding: 'utf8' },
      )
      if (imported.status === 0) {
        console.log(`  ok   import ${specifier} (${imported.stdout.trim()} exports)`)
      } else {
        failures.push(`import ${specifier}: ${imported.stderr.trim().split('\n').slice(0, 6).join('\n    ')}`)
      }
      const local = `m_${manifest.name.replace(/\W/g, '_')}_${index}`
      typeLines.push(`import * as ${local} from ${JSON.stringify(specifier)}`, `void ${local}`)
    }
    for (const bin of Object.keys(
      typeof manifest.bin === 'string' ? { [manifest.name]: 0 } : (manifest.bin ?? {}),
    )) {
      const help = spawnSync(path.join(project, 'node_modules/.bin', bin), ['--help'], {
        cwd: project,
        encoding: 'utf8',
      })
      if (help.status === 0) console.log(`  ok   ${bin} --help`)
      else
        failures.push(
          `${bin} --help exited ${help.status}: ${(help.stderr || help.stdout).trim().split('\n')[0]}`,
        )
    }
    // The package's check of its installed copy, run from the project as a user's module would be.
    if (existsSync(path.join(dir, 'test', 'installed.mjs'))) {
      const script = `installed-${path.basename(dir)}.mjs`
      copyFileSync(path.join(dir, 'test', 'installed.mjs'), path.join(project, script))
      const checked = spawnSync(process.execPath, [script], { cwd: project, encoding: 'utf8' })
      if (checked.status === 0) console.log(`  ok   ${manifest.name} test/installed.mjs`)
      else
        failures.push(
          `${manifest.name} test/installed.mjs exited ${checked.status}:\n    ${`${checked.stderr}${checked.stdout}`.trim().split('\n').slice(0, 8).join('\n    ')}`,
        )
    }
  }

  writeFileSync(path.join(project, 'check.ts'), `${typeLines.join('\n')}\n`)
  writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
      },
      files: ['check.ts'],
    }),
  )
  const tsc = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', project],
    {
      cwd: project,
      encoding: 'utf8',
    },
  )
  if (tsc.status === 0)
    console.log(`  ok   types of ${typeLines.length / 2} entry points (tsc, nodenext, skipLibCheck off)`)
  else failures.push(`tsc over the imports of every entry point:\n${tsc.stdout}${tsc.stderr}`)
} catch (error) {
  failures.push(error instanceof Error ? error.message : String(error))
} finally {
  if (keep) console.log(`pack-check: kept ${work}`)
  else rmSync(work, { recursive: true, force: true })
}

if (failures.length > 0) {
  console.error(`pack-check: ${failures.length} failure(s):`)
  for (const failure of failures) console.error(`  - ${failure}`)
  process.exit(1)
}
console.log(`pack-check: ${packages.length} packages install alone, import and type-check`)
