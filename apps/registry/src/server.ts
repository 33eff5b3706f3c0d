/**
 * The registry's entry point (`node dist/server.js`, `pnpm start:registry`): reads the environment, starts the
 * service, prints the address it bound, and shuts down gracefully on SIGTERM and SIGINT.
 */
import { describeListening, runService } from '@adwire/service-kit'
import { parseEnv } from './env.js'
import { startRegistry } from './service.js'

void runService({
  name: 'registry',
  async start(print, log) {
    const env = parseEnv(process.env)
    const registry = await startRegistry(env, { log })
    const where =
      env.database.kind === 'sqlite'
        ? `SQLite ${env.database.path}`
        : `PostgreSQL schema ${env.database.schema}`
    print(`listening on ${describeListening(registry.listener)} (${where})`)
    print(`API reference ${registry.url}/docs · OpenAPI ${registry.url}/openapi.json`)
    if (registry.seeded) print('empty database, loaded the demo world (SEED=0 disables this)')
    if (env.crawl.allowPrivate)
      print('ALLOW_PRIVATE_CRAWL is on: the crawler may reach loopback and private addresses over http')
    return registry
  },
})
