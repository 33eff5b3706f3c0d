#!/usr/bin/env node
// Runs turbo with telemetry, update checks and the remote cache switched off, so that no build step
// reaches the network. Usage: node scripts/turbo.mjs run build [turbo flags...]
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'

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
const result = spawnSync(turboBin, process.argv.slice(2), { stdio: 'inherit', env })
process.exit(result.status ?? 1)
