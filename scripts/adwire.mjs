#!/usr/bin/env node
// `pnpm adwire …`: builds the CLI and what it depends on when needed (turbo's cache makes this quick),
// then runs it with the given arguments. Build output is shown only when the build fails, so that the
// command's own standard output stays clean for scripts (`pnpm --silent adwire … | jq`).
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const build = spawnSync(
  process.execPath,
  [
    path.join(root, 'scripts/turbo.mjs'),
    'run',
    'build',
    '--filter=@adwire/cli...',
    '--output-logs=errors-only',
  ],
  { cwd: root, encoding: 'utf8' },
)
if (build.status !== 0) {
  process.stderr.write(build.stdout + build.stderr)
  process.stderr.write('adwire: building the CLI failed\n')
  process.exit(build.status ?? 1)
}
const result = spawnSync(
  process.execPath,
  [path.join(root, 'packages/cli/dist/bin.js'), ...process.argv.slice(2)],
  {
    stdio: 'inherit',
    cwd: process.env.INIT_CWD ?? process.cwd(),
    // Hints and errors name the command as typed here (`pnpm adwire …`), not the bare `adwire` of an npm install.
    env: { ...process.env, ADWIRE_COMMAND: process.env.ADWIRE_COMMAND ?? 'pnpm adwire' },
  },
)
process.exit(result.status ?? 1)
