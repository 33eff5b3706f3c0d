#!/usr/bin/env node
// `pnpm check` step: every module a package or app imports at run time is declared in its `dependencies`
// (or `peerDependencies`/`optionalDependencies`), so that a package installed alone from npm finds it. Run-time
// code is what the build entries (`entry` in tsup.config.ts) reach through relative imports; tests and test
// kits that no entry reaches may use devDependencies. Node built-ins and the package's own name need no
// declaration. Usage: node scripts/check-dependencies.mjs [workspace-dir...]
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { builtinModules } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const builtins = new Set(builtinModules)
const SOURCE = /\.(?:[cm]?[jt]s|tsx)$/
// import … from 'x', export … from 'x', import 'x', import('x'), require('x'); comments are stripped first.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)(['"])([^'"\n]+)\1/g

/** The package a bare specifier names: `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
export function packageOf(specifier) {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('#')) return undefined
  if (specifier.startsWith('node:') || builtins.has(specifier.split('/')[0])) return undefined
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
}

/**
 * The entry files of the build: every `entry` array (or `entry: { name: file }`) in tsup.config.ts; for a
 * package without a build (an example), the source files its `start` script runs, or its Next.js route handlers.
 */
function entriesOf(dir) {
  const config = path.join(dir, 'tsup.config.ts')
  if (!existsSync(config)) {
    const start = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).scripts?.start ?? ''
    const started = [...start.matchAll(/\S+\.[cm]?[jt]sx?\b/g)].map((match) => path.join(dir, match[0]))
    // A Next.js app: its route handlers are the entries.
    const routes = existsSync(path.join(dir, 'app'))
      ? readdirSync(path.join(dir, 'app'), { recursive: true })
          .map((file) => path.join(dir, 'app', String(file)))
          .filter((file) => /(?:^|\/)route\.[jt]sx?$/.test(file))
      : []
    return [...started, ...routes].filter((file) => existsSync(file))
  }
  const text = readFileSync(config, 'utf8')
  const files = new Set()
  for (const block of text.matchAll(/\bentry\s*:\s*([[{][^\]}]*[\]}])/g)) {
    for (const file of block[1].matchAll(/['"]([^'"]+\.[cm]?[jt]sx?)['"]/g))
      files.add(path.join(dir, file[1]))
  }
  return [...files].filter((file) => existsSync(file))
}

/** The source file a relative specifier names (`./x.js` is `./x.ts`, a folder its index). */
function resolveRelative(from, specifier) {
  const base = path.resolve(path.dirname(from), specifier)
  const stem = base.replace(/\.[cm]?js$/, '')
  const candidates = [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, `${stem}.js`, `${stem}.mjs`]
  candidates.push(path.join(base, 'index.ts'), path.join(base, 'index.js'))
  return candidates.find((file) => existsSync(file) && statSync(file).isFile() && SOURCE.test(file))
}

const stripComments = (code) => code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1')

/** The undeclared run-time imports of the workspace package in `dir`, as `file: specifier` lines. */
export function undeclaredImports(dir) {
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'))
  const declared = new Set([
    manifest.name,
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
    ...Object.keys(manifest.optionalDependencies ?? {}),
  ])
  const problems = []
  const queue = entriesOf(dir)
  const seen = new Set(queue)
  while (queue.length > 0) {
    const file = queue.shift()
    const code = stripComments(readFileSync(file, 'utf8'))
    for (const match of code.matchAll(SPECIFIER)) {
      const specifier = match[2]
      if (specifier.startsWith('.')) {
        const next = resolveRelative(file, specifier)
        if (next !== undefined && !seen.has(next)) {
          seen.add(next)
          queue.push(next)
        }
        continue
      }
      const name = packageOf(specifier)
      if (name !== undefined && !declared.has(name)) {
        problems.push(
          `${path.relative(root, file)}: imports "${specifier}" but ${manifest.name} does not declare "${name}" in dependencies`,
        )
      }
    }
  }
  return problems
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dirs =
    process.argv.length > 2
      ? process.argv.slice(2).map((dir) => path.resolve(dir))
      : ['packages', 'apps', 'examples'].flatMap((group) =>
          existsSync(path.join(root, group))
            ? readdirSync(path.join(root, group))
                .map((name) => path.join(root, group, name))
                .filter((dir) => existsSync(path.join(dir, 'package.json')))
            : [],
        )
  const problems = dirs.flatMap(undeclaredImports)
  if (problems.length > 0) {
    console.error(`check-dependencies: ${problems.length} undeclared run-time import(s):`)
    for (const problem of problems) console.error(`  - ${problem}`)
    process.exit(1)
  }
  console.log(`check-dependencies: every run-time import of ${dirs.length} workspace packages is declared`)
}
