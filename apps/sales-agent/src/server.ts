/**
 * The sales agent's entry point (`node dist/server.js`, `pnpm start:sales-agent`): reads the environment,
 * starts the service, prints where it listens (and the bearer token the first time one is generated), and
 * shuts down gracefully on SIGTERM and SIGINT.
 */
import { EnvError, parseEnv } from './env.js'
import { startSalesAgent } from './service.js'

const print = (line: string) => process.stdout.write(`${line}\n`)

async function main(): Promise<void> {
  const env = parseEnv(process.env)
  const agent = await startSalesAgent(env, {
    log: (entry) => process.stdout.write(`${JSON.stringify({ at: new Date().toISOString(), ...entry })}\n`),
  })
  const { tokens, key } = agent.runtime.deps
  const where =
    env.database.kind === 'sqlite'
      ? `SQLite ${env.database.path}`
      : `PostgreSQL schema ${env.database.schema}`
  print(`sales-agent: listening on ${agent.url} (${where})`)
  print(`sales-agent: MCP ${agent.publicUrl}/mcp · A2A ${agent.publicUrl}/a2a`)
  print(
    `sales-agent: webhook signing key ${key.publicJwk.kid} (${key.source}) at ${agent.publicUrl}/.well-known/jwks.json`,
  )
  if (tokens.generated) {
    print(
      'sales-agent: generated a bearer token (every permission) (printed this once; its hash is kept in the database):',
    )
    print(`  TOKEN=${tokens.generated}`)
  } else {
    print(
      tokens.source === 'env'
        ? 'sales-agent: bearer tokens from TOKENS'
        : 'sales-agent: bearer token from the database (printed at first start; set TOKENS to use others)',
    )
  }
  if (env.testKitCredentials)
    print(
      'sales-agent: the compliance test-kit keys (demo-<kit>-…) are accepted; TEST_KIT_CREDENTIALS=0 turns them off',
    )
  if (env.allowInsecureWebhookUrls)
    print('sales-agent: ALLOW_INSECURE_WEBHOOK_URLS is on: webhooks may go to http and local addresses')

  let stopping = false
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    print(`sales-agent: ${signal}, shutting down`)
    const force = setTimeout(() => {
      print('sales-agent: shutdown timed out')
      process.exit(1)
    }, 15_000)
    force.unref()
    agent.close().then(
      () => {
        print('sales-agent: stopped')
        process.exit(0)
      },
      (error: unknown) => {
        print(`sales-agent: shutdown failed: ${String(error)}`)
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

main().catch((error: unknown) => {
  process.stderr.write(
    error instanceof EnvError
      ? `sales-agent: ${error.message}\n`
      : `sales-agent: cannot start: ${String(error)}\n`,
  )
  process.exit(1)
})
