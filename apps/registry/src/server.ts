/**
 * The registry's entry point (`node dist/server.js`, `pnpm start:registry`): reads the environment, starts the
 * service, prints where it listens, and shuts down gracefully on SIGTERM and SIGINT.
 */
import { EnvError, parseEnv } from './env.js'
import { startRegistry } from './service.js'

const print = (line: string) => process.stdout.write(`${line}\n`)

async function main(): Promise<void> {
  const env = parseEnv(process.env)
  const registry = await startRegistry(env)
  const where =
    env.database.kind === 'sqlite'
      ? `SQLite ${env.database.path}`
      : `PostgreSQL schema ${env.database.schema}`
  print(`registry: listening on ${registry.url} (${where})`)
  print(`registry: API reference ${registry.url}/docs · OpenAPI ${registry.url}/openapi.json`)
  if (registry.seeded) print('registry: empty database, loaded the demo world (SEED=0 disables this)')
  if (env.crawl.allowPrivate)
    print(
      'registry: ALLOW_PRIVATE_CRAWL is on: the crawler may reach loopback and private addresses over http',
    )

  let stopping = false
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    print(`registry: ${signal}, shutting down`)
    const force = setTimeout(() => {
      print('registry: shutdown timed out')
      process.exit(1)
    }, 15_000)
    force.unref()
    registry.close().then(
      () => {
        print('registry: stopped')
        process.exit(0)
      },
      (error: unknown) => {
        print(`registry: shutdown failed: ${String(error)}`)
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

main().catch((error: unknown) => {
  process.stderr.write(
    error instanceof EnvError ? `registry: ${error.message}\n` : `registry: cannot start: ${String(error)}\n`,
  )
  process.exit(1)
})
