#!/usr/bin/env node
// `pnpm check:readmes`: every published library's README says how to install it from a clone (`scripts/pack.mjs`
// with the package's own name) and that it is ESM only, and its first code snippet is an ES module: a ```js
// block that opens with `// <file>.mjs` and that Node parses as that file (`node --check`); every app's README
// says it binds 127.0.0.1 unless HOST. Usage:
// node scripts/check-readmes.mjs
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const work = mkdtempSync(path.join(tmpdir(), 'adwire-readmes-'))
const problems = []
try {
  for (const folder of readdirSync(path.join(root, 'packages'))) {
    const dir = path.join(root, 'packages', folder)
    if (!existsSync(path.join(dir, 'package.json'))) continue
    const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'))
    if (manifest.private === true) continue
    const readme = readFileSync(path.join(dir, 'README.md'), 'utf8')
    const where = `packages/${folder}/README.md`
    if (!new RegExp(`scripts/pack\\.mjs( @adwire/[a-z-]+)* ${manifest.name}\\b`).test(readme)) {
      problems.push(
        `${where}: no install from a clone (node path/to/adwire/scripts/pack.mjs ${manifest.name})`,
      )
    }
    if (manifest.bin !== undefined) continue // a command, not a library: no snippet to import
    if (!/\*\*ESM only\*\*/.test(readme)) problems.push(`${where}: does not say the package is **ESM only**`)
    const snippet = /^```(\w+)\n([\s\S]*?)^```$/m.exec(readme.replace(/^```sh\n[\s\S]*?^```$/gm, ''))
    const file = snippet?.[2].match(/^\/\/ ([\w.-]+\.mjs)\n/)?.[1]
    if (snippet?.[1] !== 'js' || file === undefined) {
      problems.push(`${where}: the first snippet is not a \`\`\`js block opening with // <file>.mjs`)
      continue
    }
    const target = path.join(work, `${folder}-${file}`)
    writeFileSync(target, snippet[2])
    const check = spawnSync(process.execPath, ['--check', target], { encoding: 'utf8' })
    if (check.status !== 0) {
      problems.push(`${where}: the ${file} snippet is not valid ESM JavaScript:\n${check.stderr.trim()}`)
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
// Every service binds 127.0.0.1 unless HOST says otherwise (@adwire/service-kit listen): its README says so.
for (const folder of readdirSync(path.join(root, 'apps'))) {
  const file = path.join(root, 'apps', folder, 'README.md')
  if (!existsSync(file)) continue
  const readme = readFileSync(file, 'utf8')
  const where = `apps/${folder}/README.md`
  if (/listens on http:\/\/0\.0\.0\.0|every interface/.test(readme)) {
    problems.push(`${where}: claims to listen on every interface; it binds 127.0.0.1 unless HOST`)
  }
  if (!/^\|[^\n]*`HOST`[^\n]*\|[^\n]*`127\.0\.0\.1`/m.test(readme)) {
    problems.push(`${where}: its settings table does not give HOST's default, 127.0.0.1`)
  }
}
for (const problem of problems) console.error(problem)
if (problems.length > 0) process.exit(1)
console.log(
  'check:readmes: every library README installs from a clone, says ESM only and shows an ESM snippet; ' +
    'every app README binds 127.0.0.1 unless HOST',
)
