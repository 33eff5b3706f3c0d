/** `adwire registry admin …`: runs the registry app's admin script, inside a checkout that has the app. */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Io } from '../io.js'

/** The workspace root holding apps/registry, searched from the working directory and from this file. */
export function findRegistryCheckout(
  starts: readonly string[] = [process.cwd(), path.dirname(fileURLToPath(import.meta.url))],
): string | undefined {
  for (const start of starts) {
    let dir = path.resolve(start)
    for (;;) {
      if (
        existsSync(path.join(dir, 'pnpm-workspace.yaml')) &&
        existsSync(path.join(dir, 'apps/registry/package.json'))
      ) {
        return dir
      }
      const parent = path.dirname(dir)
      if (parent === dir) break
      dir = parent
    }
  }
  return undefined
}

/**
 * How to run the registry's admin script: the built `apps/registry/dist/auth/admin-cli.js`, or else its source
 * through the app's tsx. `undefined` outside a checkout with the registry app.
 */
export function adminScriptCommand(root: string | undefined): string[] | undefined {
  if (!root) return undefined
  const built = path.join(root, 'apps/registry/dist/auth/admin-cli.js')
  if (existsSync(built)) return [built]
  const source = path.join(root, 'apps/registry/src/auth/admin-cli.ts')
  if (!existsSync(source)) return undefined
  try {
    const tsx = createRequire(path.join(root, 'apps/registry/package.json')).resolve('tsx')
    return ['--import', pathToFileURL(tsx).href, source]
  } catch {
    return undefined
  }
}

/** `adwire registry admin …` (create-org, …); resolves with the script's exit code. */
export async function admin(argv: string[], io: Io): Promise<number> {
  const root = findRegistryCheckout()
  const command = adminScriptCommand(root)
  if (!command || !root) {
    io.stderr(
      'adwire: the registry admin commands write into the registry database directly, so they run inside a\n' +
        'checkout of adwire that contains the registry app (apps/registry; build it with `pnpm build`).\n',
    )
    return 1
  }
  // Without DATABASE_URL, the service's default database is relative to the app's folder, where
  // `pnpm start:registry` runs it: run there so that both mean the same file.
  const child = spawn(process.execPath, [...command, ...argv], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: process.env,
    cwd: process.env.DATABASE_URL ? process.cwd() : path.join(root, 'apps/registry'),
  })
  child.stdout.setEncoding('utf8').on('data', (text: string) => io.stdout(text))
  child.stderr.setEncoding('utf8').on('data', (text: string) => io.stderr(text))
  return new Promise<number>((resolve) => {
    child.on('error', (error) => {
      io.stderr(`adwire: cannot run the registry admin script: ${error.message}\n`)
      resolve(1)
    })
    child.on('close', (code) => resolve(code ?? 1))
  })
}
