/**
 * The creative agent's entry point (`node dist/server.js`, `pnpm start:creative-agent`): reads the environment,
 * starts the service, prints the address it bound (and the bearer token the first time one is generated), and
 * shuts down gracefully on SIGTERM and SIGINT.
 */
import { describeListening, runService } from '@adwire/service-kit'
import { parseEnv } from './env.js'
import { startCreativeAgent } from './service.js'

void runService({
  name: 'creative-agent',
  async start(print, log) {
    const env = parseEnv(process.env)
    const agent = await startCreativeAgent(env, {
      log,
    })
    const { tokens, keys } = agent.runtime.deps
    const where =
      env.database.kind === 'sqlite'
        ? `SQLite ${env.database.path}`
        : `PostgreSQL schema ${env.database.schema}`
    print(`listening on ${describeListening(agent.listener)} (${where})`)
    print(
      `MCP ${agent.publicUrl}/mcp · A2A ${agent.publicUrl}/a2a · previews ${agent.publicUrl}/previews/{id}`,
    )
    print(
      `webhook-signing key ${keys.webhook.publicJwk.kid} (${keys.webhook.source}), request-signing key ${keys.request.publicJwk.kid} (${keys.request.source}) at ${agent.publicUrl}/.well-known/jwks.json`,
    )
    if (tokens.generated) {
      print(
        'generated a bearer token for build_creative (printed this once; its hash is kept in the database):',
      )
      print(`  TOKEN=${tokens.generated}`)
    } else {
      print(
        tokens.source === 'env'
          ? 'bearer tokens from TOKENS'
          : 'bearer token from the database (printed at first start; set TOKENS to use others)',
      )
    }
    if (env.allowInsecureWebhookUrls)
      print('ALLOW_INSECURE_WEBHOOK_URLS is on: webhooks may go to http and local addresses')
    return agent
  },
})
