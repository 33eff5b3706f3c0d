#!/usr/bin/env node
// `pnpm check` step: the Node story agrees with itself. The root `engines.node` range names the supported
// Node lines once; every workspace package.json repeats it, `.nvmrc` names a supported line, the README
// states each line's minimum, every installed dependency accepts the minimum of each line (so `pnpm install`
// prints no engine warning on a supported Node), and `.npmrc` holds nothing npm warns about.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import semver from 'semver'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const problems = []
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'))

const range = readJson(path.join(root, 'package.json')).engines?.node
if (typeof range !== 'string' || semver.validRange(range) === null) {
  console.error('check-node-support: the root package.json has no valid engines.node range')
  process.exit(1)
}
// The lowest version of each supported line: "^22.18.0 || >=24.11.0" gives 22.18.0 and 24.11.0.
const minimums = range.split('||').map((set) => semver.minVersion(set.trim()).version)

// 1. Every workspace package states the same range.
for (const dir of ['packages', 'apps', 'tooling']) {
  const base = path.join(root, dir)
  if (!existsSync(base)) continue
  for (const name of readdirSync(base)) {
    const file = path.join(base, name, 'package.json')
    if (!existsSync(file)) continue
    const stated = readJson(file).engines?.node
    if (stated !== range) {
      problems.push(
        `${dir}/${name}/package.json: engines.node is ${JSON.stringify(stated)}, expected "${range}"`,
      )
    }
  }
}

// 2. .nvmrc names a supported line.
const nvmrc = readFileSync(path.join(root, '.nvmrc'), 'utf8').trim()
const nvmVersion = semver.coerce(nvmrc)
if (nvmVersion === null || !semver.intersects(`${nvmVersion.major}.x`, range)) {
  problems.push(`.nvmrc says "${nvmrc}", which is not a supported line (${range})`)
}

// 3. The README names each line's minimum.
const readme = readFileSync(path.join(root, 'README.md'), 'utf8')
for (const minimum of minimums) {
  const short = minimum.replace(/\.0$/, '')
  if (!readme.includes(short)) problems.push(`README.md does not name the supported minimum Node ${short}`)
}

// 4. Every installed third-party package accepts the minimum of each supported line.
const store = path.join(root, 'node_modules/.pnpm')
const manifests = []
for (const entry of existsSync(store) ? readdirSync(store) : []) {
  const modules = path.join(store, entry, 'node_modules')
  if (!existsSync(modules)) continue
  for (const name of readdirSync(modules)) {
    const names = name.startsWith('@')
      ? readdirSync(path.join(modules, name)).map((inner) => `${name}/${inner}`)
      : [name]
    for (const full of names) manifests.push(path.join(modules, full, 'package.json'))
  }
}
const seen = new Set()
for (const file of manifests) {
  if (!existsSync(file)) continue
  let manifest
  try {
    manifest = readJson(file)
  } catch {
    continue
  }
  const wanted = manifest.engines?.node
  const id = `${manifest.name}@${manifest.version}`
  if (typeof wanted !== 'string' || seen.has(id) || semver.validRange(wanted) === null) continue
  seen.add(id)
  for (const minimum of minimums) {
    if (!semver.satisfies(minimum, wanted)) {
      problems.push(`${id} wants Node ${wanted}: pnpm install warns on the supported Node ${minimum}`)
    }
  }
}
if (seen.size === 0) problems.push('no installed packages found under node_modules/.pnpm (run pnpm install)')

// 5. npm reads .npmrc too (npx, npm pack): it must hold only keys npm knows.
const npm = spawnSync('npm', ['config', 'get', 'engine-strict'], { cwd: root, encoding: 'utf8' })
const npmWarnings = (npm.stderr ?? '').split('\n').filter((line) => /warn/i.test(line))
for (const line of npmWarnings) problems.push(`npm warns in this repository: ${line.trim()}`)

if (problems.length > 0) {
  console.error(`check-node-support: ${problems.length} problem(s) with the supported Node lines (${range}):`)
  for (const problem of problems) console.error(`  - ${problem}`)
  process.exit(1)
}
console.log(
  `check-node-support: Node ${minimums.join(' and ')} lines (${range}) agree across ${seen.size} installed packages, engines, .nvmrc, README and .npmrc`,
)
