/**
 * The real dependencies of the sales agent, built from its environment: `openSeller` of @adwire/seller over
 * the simulated ad server (the demo catalog and the paced delivery model), with the agent's identity, its
 * tokens, keys and cadences from the environment.
 */
import {
  DEFAULT_PRINCIPAL,
  IN_FLIGHT_MAX_SECONDS,
  RETRY_HORIZON_SECONDS,
  openSeller,
  type SellerKey,
  type SellerLog,
  type SellerOverrides,
  type SellerRuntime,
} from '@adwire/seller'
import type { SalesAgentEnv } from './env.js'
import { BRAND } from './app.js'
import { demoCatalog } from './catalog/demo-catalog.js'
import { pacedDelivery } from './delivery/pacing.js'

export { DEFAULT_PRINCIPAL, IN_FLIGHT_MAX_SECONDS, RETRY_HORIZON_SECONDS }

/** A structured log line. */
export type Log = SellerLog

/** The agent's version, reported in get_adcp_capabilities and the agent card. */
export const AGENT_VERSION = '0.1.0'

/** The webhook-signing key and the JWKS publishing it. */
export type SalesAgentKey = SellerKey

/** What {@link createApp} needs: the opened seller; nothing in it reads the environment. */
export type SalesAgentDeps = SellerRuntime

/** Replacements for tests and embedding. */
export interface DepsOverrides extends SellerOverrides {
  readonly log?: Log
  /** Unix seconds: the task server, the sender, the delivery clock. */
  readonly now?: () => number
}

export interface Runtime {
  readonly deps: SalesAgentDeps
  /** Waits for background work, stops the sender, closes the database. */
  close(): Promise<void>
}

/**
 * @example
 * const runtime = await openDeps(parseEnv(), 'http://127.0.0.1:4500')
 * const app = createApp(runtime.deps)
 */
export async function openDeps(
  env: SalesAgentEnv,
  publicUrl: string,
  overrides: DepsOverrides = {},
): Promise<Runtime> {
  const { log, now, ...seller } = overrides
  const deps = await openSeller({
    settings: env,
    catalog: demoCatalog(env.creativeAgentUrl),
    delivery: pacedDelivery(env.deliverySeed),
    database: env.database,
    publicUrl,
    tokens: env.tokens,
    tokenPrefix: 'sat_',
    defaultPrincipal: DEFAULT_PRINCIPAL,
    testKitCredentials: env.testKitCredentials,
    ...(env.jwt ? { jwt: env.jwt } : {}),
    ...(env.signingKey ? { signingKey: env.signingKey } : {}),
    kidPrefix: 'sales-agent',
    idempotencyTtlSeconds: env.idempotencyTtlSeconds,
    ...(env.http.maxBodyBytes ? { maxBodyBytes: env.http.maxBodyBytes } : {}),
    ...(env.demoReportSeconds ? { demoReportSeconds: env.demoReportSeconds } : {}),
    webhookActivityRetentionSeconds: env.webhookActivityRetentionSeconds,
    identity: {
      name: 'adwire-sales-agent',
      version: AGENT_VERSION,
      description:
        'AdCP 3.1 sales agent: display, video, audio and CTV products, media buys, creatives and delivery reporting',
      brand: BRAND,
      userAgent: 'adwire-sales-agent',
    },
    ...(now ? { now } : {}),
    ...(log ? { log } : {}),
    overrides: seller,
  })
  return { deps, close: () => deps.close() }
}
