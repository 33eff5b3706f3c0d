/**
 * The sales agent's entry point (`node dist/server.js`, `pnpm start:sales-agent`): reads the environment,
 * starts the service, prints the address it bound (and the bearer token the first time one is generated), and
 * shuts down gracefully on SIGTERM and SIGINT.
 */
import { describeListening, runService } from '@adwire/service-kit'
import { parseEnv } from './env.js'
import { startSalesAgent } from './service.js'

void runService({
  name: 'sales-agent',
  async start(print, log) {
    const env = parseEnv(process.env)
    const agent = await startSalesAgent(env, {
      log,
    })
    const { tokens, key } = agent.runtime.deps
    const where =
      env.database.kind === 'sqlite'
        ? `SQLite ${env.database.path}`
        : `PostgreSQL schema ${env.database.schema}`
    print(`listening on ${describeListening(agent.listener)} (${where})`)
    print(`MCP ${agent.publicUrl}/mcp · A2A ${agent.publicUrl}/a2a`)
    print(
      `webhook signing key ${key.publicJwk.kid} (${key.source}) at ${agent.publicUrl}/.well-known/jwks.json`,
    )
    if (tokens.generated) {
      print(
        'generated a bearer token (every permission) (printed this once; its hash is kept in the database):',
      )
      print(`  TOKEN=${tokens.generated}`)
    } else {
      print(
        tokens.source === 'env'
          ? 'bearer tokens from TOKENS'
          : 'bearer token from the database (printed at first start; set TOKENS to use others)',
      )
    }
    if (env.testKitCredentials)
      print(
        'TEST_KIT_CREDENTIALS is on (test only): the compliance test-kit keys (demo-<kit>-…) are accepted, each its own principal',
      )
    if (env.complyTestController)
      print(
        'COMPLY_TEST_CONTROLLER is on (test only): comply_test_controller seeds and forces state on sandbox accounts',
      )
    if (env.allowInsecureWebhookUrls)
      print('ALLOW_INSECURE_WEBHOOK_URLS is on: webhooks may go to http and local addresses')
    return agent
  },
})
