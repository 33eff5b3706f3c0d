#!/usr/bin/env node
// Installs adwire libraries from a clone, until they are on the npm registry. Run in your own project:
//
//   node path/to/adwire/scripts/pack.mjs @adwire/webhooks @adwire/store-sqlite
//
// builds the named packages (turbo, cached), packs each with `pnpm pack` (which turns `workspace:*` into
// versions) together with the adwire packages it depends on, into ./adwire-packages/ of the current folder,
// then runs `npm install` of those tarballs there (third-party dependencies come from the registry; npm takes
// the adwire ones from the tarballs installed beside them). --no-install only packs and prints the tarballs;
// --out DIR writes them elsewhere.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    out: { type: 'string' },
    'no-install': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
})
const usage = 'usage: node scripts/pack.mjs [--out DIR] [--no-install] @adwire/NAME…'
if (values.help) {
  console.log(usage)
  process.exit(0)
}

const libraries = new Map(
  readdirSync(path.join(root, 'packages'))
    .map((name) => path.join(root, 'packages', name))
    .filter((dir) => existsSync(path.join(dir, 'package.json')))
    .map((dir) => [dir, JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'))])
    .filter(([, manifest]) => manifest.private !== true)
    .map(([dir, manifest]) => [manifest.name, { dir, manifest }]),
)
if (positionals.length === 0) {
  console.error(`${usage}\npackages: ${[...libraries.keys()].join(' ')}`)
  process.exit(2)
}
// The named packages and, transitively, the adwire packages they depend on at run time.
const wanted = []
const visit = (name) => {
  const full = name.startsWith('@adwire/') ? name : `@adwire/${name}`
  const library = libraries.get(full)
  if (library === undefined) {
    console.error(`pack: no published package ${full} (packages: ${[...libraries.keys()].join(' ')})`)
    process.exit(2)
  }
  if (wanted.includes(full)) return
  wanted.push(full)
  for (const dependency of Object.keys(library.manifest.dependencies ?? {})) {
    if (libraries.has(dependency)) visit(dependency)
  }
}
positionals.forEach(visit)

const run = (command, args, cwd, what) => {
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' })
  if (result.status !== 0) {
    process.stderr.write(result.stdout ?? '')
    console.error(`pack: ${what} failed (exit ${result.status})`)
    process.exit(1)
  }
  return result.stdout
}

const filters = wanted.map((name) => `--filter=${name}`)
run(
  process.execPath,
  [path.join(root, 'scripts/turbo.mjs'), 'run', 'build', ...filters, '--output-logs=errors-only'],
  root,
  'the build',
)
const out = path.resolve(values.out ?? 'adwire-packages')
mkdirSync(out, { recursive: true })
const tarballs = wanted.map((name) => {
  const { dir } = libraries.get(name)
  const report = JSON.parse(
    run('pnpm', ['pack', '--json', '--pack-destination', out], dir, `pnpm pack of ${name}`),
  )
  return path.resolve(dir, report.filename)
})
console.error(`pack: ${tarballs.length} tarballs in ${out}`)
if (values['no-install']) {
  for (const tarball of tarballs) console.log(tarball)
  process.exit(0)
}
const relative = tarballs.map((tarball) => {
  const name = path.relative(process.cwd(), tarball)
  return name.startsWith('.') ? name : `./${name}`
})
console.error(`pack: npm install ${relative.join(' ')}`)
const install = spawnSync('npm', ['install', ...relative], { stdio: 'inherit' })
process.exit(install.status ?? 1)
