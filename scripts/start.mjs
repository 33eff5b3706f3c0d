#!/usr/bin/env node
// `pnpm start [app]`: starts the named app, or every app, on its embedded default (SQLite). Each app is a
// workspace package under apps/ with a `start` script (packages without one are skipped with a message); the
// ports are the apps' defaults.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const APPS = {
  registry: { port: 4100, what: 'the registry REST service' },
  'creative-agent': { port: 4200, what: 'the creative agent (MCP and A2A)' },
  receiver: { port: 4300, what: 'the reference webhook receiver' },
  'sales-agent': { port: 4500, what: 'the sales agent (MCP and A2A)' },
}

const wanted = process.argv[2]
if (wanted === '--help' || wanted === '-h') {
  console.log(
    `usage: pnpm start [${Object.keys(APPS).join('|')}]\n\nStarts one app, or every app that exists, on its embedded default (SQLite under ./data).`,
  )
  process.exit(0)
}
if (wanted !== undefined && !(wanted in APPS)) {
  console.error(`start: unknown app "${wanted}"; the apps are ${Object.keys(APPS).join(', ')}`)
  process.exit(2)
}
const manifestOf = (name) => {
  const file = path.join(root, 'apps', name, 'package.json')
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined
}
// An app counts once its package has a `start` script; a package without one is still being built.
const isBuilt = (name) => typeof manifestOf(name)?.scripts?.start === 'string'
const names = wanted ? [wanted] : Object.keys(APPS)
const missing = names.filter((name) => !isBuilt(name))
for (const name of missing) {
  const state = manifestOf(name) ? 'has no start script yet' : 'is not built yet'
  console.error(
    `start: ${name} (${APPS[name].what}, port ${APPS[name].port}) ${state}; it lands with its issue`,
  )
}
const present = names.filter(isBuilt)
if (present.length === 0) {
  // A single named app that does not exist yet is an error; `pnpm start` with nothing to start says so.
  if (wanted) process.exit(1)
  console.log(
    'start: no app exists yet; nothing to start. `pnpm adwire --help` lists what the CLI can do today.',
  )
  process.exit(0)
}

const build = spawnSync(
  process.execPath,
  [
    path.join(root, 'scripts/turbo.mjs'),
    'run',
    'build',
    ...present.map((name) => `--filter=./apps/${name}...`),
    '--output-logs=errors-only',
  ],
  { cwd: root, stdio: 'inherit' },
)
if (build.status !== 0) process.exit(build.status ?? 1)

const children = present.map((name) => {
  const manifest = manifestOf(name)
  console.log(
    `start: ${name} (${manifest.name}) on port ${process.env.PORT && wanted ? process.env.PORT : APPS[name].port}`,
  )
  return spawn('pnpm', ['--filter', `./apps/${name}`, 'run', 'start'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ...(wanted ? {} : { PORT: String(APPS[name].port) }) },
  })
})
let stopping = false
const stop = (signal) => {
  stopping = true
  children.forEach((child) => child.kill(signal))
}
process.on('SIGINT', () => stop('SIGINT'))
process.on('SIGTERM', () => stop('SIGTERM'))
let remaining = children.length
let worst = 0
for (const child of children) {
  child.on('exit', (code, signal) => {
    // A child that ends because we passed on Ctrl-C or SIGTERM has stopped as asked.
    const status = code ?? (stopping && signal ? 0 : 1)
    worst = Math.max(worst, stopping && code !== 0 && signal === null && code !== null ? code : status)
    if (--remaining === 0) process.exit(worst)
  })
}
