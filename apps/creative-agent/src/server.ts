/**
 * The creative agent's entry point (`node dist/server.js`, `pnpm start:creative-agent`): reads the environment,
 * starts the service, prints where it listens (and the bearer token the first time one is generated), and
 * shuts down gracefully on SIGTERM and SIGINT.
 */
import { EnvError, parseEnv } from './env.js'
import { startCreativeAgent } from './service.js'

const print = (line: string) => process.stdout.write(`${line}\n`)

async function main(): Promise<void> {
  const env = parseEnv(process.env)
  const agent = await startCreativeAgent(env, {
    log: (entry) => process.stdout.write(`${JSON.stringify({ at: new Date().toISOString(), ...entry })}\n`),
  })
  const { tokens, keys } = agent.runtime.deps
  const where =
    env.database.kind === 'sqlite'
      ? `SQLite ${env.database.path}`
      : `PostgreSQL schema ${env.database.schema}`
  print(`creative-agent: listening on ${agent.url} (${where})`)
  print(
    `creative-agent: MCP ${agent.publicUrl}/mcp · A2A ${agent.publicUrl}/a2a · previews ${agent.publicUrl}/previews/{id}`,
  )
  print(
    `creative-agent: webhook-signing key ${keys.webhook.publicJwk.kid} (${keys.webhook.source}), request-signing key ${keys.request.publicJwk.kid} (${keys.request.source}) at ${agent.publicUrl}/.well-known/jwks.json`,
  )
  if (tokens.generated) {
    print(
      'creative-agent: generated a bearer token for build_creative (printed this once; its hash is kept in the database):',
    )
    print(`  TOKEN=${tokens.generated}`)
  } else {
    print(
      tokens.source === 'env'
        ? 'creative-agent: bearer tokens from TOKENS'
        : 'creative-agent: bearer token from the database (printed at first start; set TOKENS to use others)',
    )
  }
  if (env.allowInsecureWebhookUrls)
    print('creative-agent: ALLOW_INSECURE_WEBHOOK_URLS is on: webhooks may go to http and local addresses')

  let stopping = false
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    print(`creative-agent: ${signal}, shutting down`)
    const force = setTimeout(() => {
      print('creative-agent: shutdown timed out')
      process.exit(1)
    }, 15_000)
    force.unref()
    agent.close().then(
      () => {
        print('creative-agent: stopped')
        process.exit(0)
      },
      (error: unknown) => {
        print(`creative-agent: shutdown failed: ${String(error)}`)
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
      ? `creative-agent: ${error.message}\n`
      : `creative-agent: cannot start: ${String(error)}\n`,
  )
  process.exit(1)
})
