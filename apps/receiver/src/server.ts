/**
 * The receiver's entry point (`node dist/server.js`, `pnpm start:receiver`): reads the environment, starts
 * the service, prints where it listens (and the admin token the first time it is generated), and shuts down
 * gracefully on SIGTERM and SIGINT.
 */
import { EnvError, parseEnv } from './env.js'
import { startReceiver } from './service.js'

const print = (line: string) => process.stdout.write(`${line}\n`)

async function main(): Promise<void> {
  const env = parseEnv(process.env)
  const receiver = await startReceiver(env, {
    log: (entry) => process.stdout.write(`${JSON.stringify({ at: new Date().toISOString(), ...entry })}\n`),
  })
  const { admin, deps } = receiver.runtime
  const where =
    env.database.kind === 'sqlite'
      ? `SQLite ${env.database.path}`
      : `PostgreSQL schema ${env.database.schema}`
  print(`receiver: listening on ${receiver.url} (${where})`)
  print(`receiver: page ${receiver.url}/ · deliveries ${env.publicUrl ?? receiver.url}/webhooks/{id}`)
  if (admin.generated) {
    print('receiver: generated an admin token (printed this once; its hash is kept in the database):')
    print(`  ADMIN_TOKEN=${admin.generated}`)
  } else {
    print(
      admin.source === 'env'
        ? 'receiver: admin token from ADMIN_TOKEN'
        : 'receiver: admin token from the database (printed at first start; set ADMIN_TOKEN to use another)',
    )
  }
  if (deps.forwarding) print(`receiver: forwarding events to ${env.downstreamUrl}`)

  let stopping = false
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    print(`receiver: ${signal}, shutting down`)
    const force = setTimeout(() => {
      print('receiver: shutdown timed out')
      process.exit(1)
    }, 15_000)
    force.unref()
    receiver.close().then(
      () => {
        print('receiver: stopped')
        process.exit(0)
      },
      (error: unknown) => {
        print(`receiver: shutdown failed: ${String(error)}`)
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

main().catch((error: unknown) => {
  process.stderr.write(
    error instanceof EnvError ? `receiver: ${error.message}\n` : `receiver: cannot start: ${String(error)}\n`,
  )
  process.exit(1)
})
