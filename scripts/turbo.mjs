#!/usr/bin/env node
// Runs turbo with telemetry, update checks and the remote cache switched off, so that no build step
// reaches the network. Usage: node scripts/turbo.mjs run build [turbo flags...]
// With --progress (ours, not turbo's), each task's output is held back and one line is printed as each task
// ends (`build 3: @adwire/schemas:build (cache miss, 41s)`); the whole output of a failed task is printed.
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { createInterface } from 'node:readline'

const require = createRequire(import.meta.url)
const turboBin = path.join(path.dirname(require.resolve('turbo/package.json')), 'bin', 'turbo')
const env = {
  ...process.env,
  TURBO_TELEMETRY_DISABLED: '1',
  DO_NOT_TRACK: '1',
  TURBO_NO_UPDATE_NOTIFIER: '1',
  TURBO_REMOTE_CACHE_DISABLED: '1',
}
delete env.TURBO_TOKEN
delete env.TURBO_TEAM
delete env.TURBO_API

const args = process.argv.slice(2)
const progress = args.includes('--progress')

if (!progress) {
  const child = spawn(turboBin, args, { stdio: 'inherit', env })
  child.on('close', (code) => process.exit(code ?? 1))
} else {
  // Grouped logs: turbo prints a task's lines together when the task ends, so the first line of a group
  // marks that task's end.
  const turboArgs = [
    ...args.filter(
      (arg) => arg !== '--progress' && !arg.startsWith('--output-logs') && !arg.startsWith('--log-order'),
    ),
    '--output-logs=full',
    '--log-order=grouped',
    '--log-prefix=task',
  ]
  const started = Date.now()
  const child = spawn(turboBin, turboArgs, { stdio: ['ignore', 'pipe', 'inherit'], env })
  /** @type {Map<string, string[]>} */
  const groups = new Map()
  let current = ''
  // The end of the task whose group is being read is printed once its whole group has arrived.
  const finish = () => {
    if (!current) return
    const lines = groups.get(current) ?? []
    const cache = /cache hit/.test(lines[0] ?? '') ? 'cache hit' : 'built'
    const failed = lines.some((line) => /ERROR/.test(line))
    const seconds = Math.round((Date.now() - started) / 1000)
    process.stdout.write(`${failed ? 'FAILED' : 'done'} ${current} (${groups.size}, ${cache}, ${seconds}s)\n`)
    current = ''
  }
  createInterface({ input: child.stdout }).on('line', (line) => {
    const match = /^(\S+:[\w:-]+):(?: (.*))?$/.exec(line)
    if (match?.[1] && !/^(Tasks|Cached|Time|Failed)$/.test(match[1])) {
      if (match[1] !== current) {
        finish()
        current = match[1]
      }
      const group = groups.get(current) ?? []
      group.push(line)
      groups.set(current, group)
      return
    }
    finish()
    // turbo's own lines (the header and the closing summary) pass through.
    if (line.trim()) process.stdout.write(`${line}\n`)
  })
  child.on('close', (code) => {
    finish()
    if (code !== 0) {
      // The held-back output of the failed tasks (of every task run, when none says ERROR).
      const failed = [...groups].filter(([, lines]) => lines.some((line) => /ERROR/.test(line)))
      const shown =
        failed.length > 0 ? failed : [...groups].filter(([, lines]) => !/cache hit/.test(lines[0] ?? ''))
      for (const [, lines] of shown) process.stdout.write(`${lines.join('\n')}\n`)
    }
    process.exit(code ?? 1)
  })
}
