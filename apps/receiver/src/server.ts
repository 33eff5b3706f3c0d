/**
 * The receiver's entry point (`node dist/server.js`, `pnpm start:receiver`): reads the environment, starts
 * the service, prints the address it bound (and the admin token the first time it is generated), and shuts
 * down gracefully on SIGTERM and SIGINT.
 */
import { describeListening, runService } from '@adwire/service-kit'
import { redactUrl } from '@adwire/webhooks'
import { parseEnv } from './env.js'
import { startReceiver } from './service.js'

void runService({
  name: 'receiver',
  async start(print, log) {
    const env = parseEnv(process.env)
    const receiver = await startReceiver(env, {
      log,
    })
    const { admin, deps } = receiver.runtime
    const where =
      env.database.kind === 'sqlite'
        ? `SQLite ${env.database.path}`
        : `PostgreSQL schema ${env.database.schema}`
    print(`listening on ${describeListening(receiver.listener)} (${where})`)
    print(`page ${receiver.url}/ · deliveries ${env.publicUrl ?? receiver.url}/webhooks/{id}`)
    if (admin.generated) {
      print('generated an admin token (printed this once; its hash is kept in the database):')
      print(`  ADMIN_TOKEN=${admin.generated}`)
    } else {
      print(
        admin.source === 'env'
          ? 'admin token from ADMIN_TOKEN'
          : 'admin token from the database (printed at first start; set ADMIN_TOKEN to use another)',
      )
    }
    if (admin.ticketKey === 'process') {
      print('stream tickets open this process only: set STREAM_TICKET_SECRET for several instances')
    }
    const sinkUrl = env.sinkUrl ?? env.downstreamUrl
    if (deps.forwarding && sinkUrl) print(`relaying events to ${redactUrl(sinkUrl)}`)
    return receiver
  },
})
