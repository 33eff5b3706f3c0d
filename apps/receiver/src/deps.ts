/**
 * The real dependencies of the receiver, built from its environment: the stores on SQLite or PostgreSQL, the
 * admin token, the SSRF-safe fetch for sellers' keys, the live event hub and the relay into the sink
 * (SINK_URL or DOWNSTREAM_URL).
 */
import type { SafeFetch } from '@adwire/http-signatures'
import type { TargetPolicy } from '@adwire/http-signatures/node'
import type { RelayStatus, Sink } from '@adwire/webhooks'
import { resolveAdminToken, type AdminAuth, type ResolvedAdmin } from './admin.js'
import { openStorage, type Storage } from './db/open.js'
import type { ReceiverDatabase } from './db/types.js'
import type { ReceiverEnv } from './env.js'
import { createForwarder, type Forwarder, type RelaySettings } from './forwarder.js'
import { createEventHub, type EventHub } from './hub.js'
import { outboundFetches } from './outbound.js'
import { sinkFromUrl } from './sinks.js'

/** A structured log line (printed as JSON by the server; collected or dropped by tests). */
export type Log = (entry: Record<string, unknown>) => void

/** What {@link createApp} needs; nothing in it reads the environment. */
export interface ReceiverDeps {
  readonly storage: Storage
  readonly admin: AdminAuth
  readonly hub: EventHub
  /** Fetches sellers' JWKS and brand.json (SSRF-safe). */
  readonly keyFetch: SafeFetch
  /** Calls sellers' agents (`get_adcp_capabilities`), SSRF-safe. */
  readonly agentFetch: typeof fetch
  /** Key URLs may be http and local (development). */
  readonly allowInsecureKeyUrls: boolean
  /** The public base URL (no trailing slash), when the receiver sits behind a proxy. */
  readonly publicUrl?: string
  /** How long a delivery owns its event before a retry may take it over, seconds. */
  readonly deliveryLeaseSeconds: number
  /** Whether published events are queued for the relay into the sink. */
  readonly forwarding: boolean
  /** The relay's lag and last error, for /health and the page (set when forwarding). */
  readonly relayStatus?: () => Promise<RelayStatus>
  /**
   * `'inbox'` (default): each delivery's nonce, claim, convergence record and event commit in one transaction
   * of the storage's inbox, shared by the deliveries arriving together. `'claims'`: claim → publish →
   * complete, each its own commit (the protocol for publishers outside the store; kept for comparison).
   */
  readonly publication?: 'inbox' | 'claims'
  /** SQLite: the inbox on a worker thread when true (SQLITE_INBOX_THREAD); on the event loop otherwise. */
  readonly inboxWorker?: boolean
  /** Called after each publication and failure is written (wakes the stream and the forwarder). */
  readonly onWrite: () => void
  readonly log: Log
  /** Unix seconds. */
  readonly now?: () => number
}

/** Replacements for tests. */
export interface DepsOverrides {
  readonly keyFetch?: SafeFetch
  readonly agentFetch?: typeof fetch
  /** Resolves host names for every outbound fetch (default `node:dns`). */
  readonly lookup?: TargetPolicy['lookup']
  readonly log?: Log
  readonly now?: () => number
  readonly hubPollMs?: number
  /** The relay's timings (and the HTTP sink's timeout). */
  readonly forwarder?: RelaySettings
  /** A sink in place of the one SINK_URL names (tests); forwarding is on with it. */
  readonly sink?: Sink
  /** Wraps the receiver's tables (fault injection in the crash tests). */
  readonly database?: (db: ReceiverDatabase) => ReceiverDatabase
  /** See {@link ReceiverDeps.publication}. */
  readonly publication?: 'inbox' | 'claims'
}

/** The dependencies plus what the server runs beside the app. */
export interface Runtime {
  readonly deps: ReceiverDeps
  readonly admin: ResolvedAdmin
  readonly forwarder?: Forwarder
  /** Stops the hub and the relay, closes the sink and the database. */
  close(): Promise<void>
}

/**
 * @example
 * const runtime = await openDeps(parseEnv())
 * const app = createApp(runtime.deps)
 */
export async function openDeps(env: ReceiverEnv, overrides: DepsOverrides = {}): Promise<Runtime> {
  const log = overrides.log ?? (() => {})
  const opened = await openStorage(env.database, {
    eventRetentionSeconds: env.eventRetentionDays * 86_400,
    inboxGroups: env.postgresInboxGroups,
    ...(overrides.now ? { now: overrides.now } : {}),
  })
  const storage = overrides.database ? { ...opened, db: overrides.database(opened.db) } : opened
  try {
    const admin = await resolveAdminToken(storage.db, env.adminToken, env.streamTicketSecret)
    const hub = createEventHub(storage.db, {
      ...(overrides.hubPollMs ? { pollMs: overrides.hubPollMs } : {}),
      log: (error) => log({ hub: 'poll_failed', error: (error as Error).message }),
    })
    const outbound = outboundFetches({
      allowInsecure: env.allowInsecureKeyUrls,
      ...(overrides.lookup ? { lookup: overrides.lookup } : {}),
    })
    const sinkUrl = env.sinkUrl ?? env.downstreamUrl
    const sink =
      overrides.sink ??
      (sinkUrl
        ? await sinkFromUrl(sinkUrl, {
            fetch: outbound.forwardFetch,
            ...(overrides.forwarder?.timeoutMs ? { timeoutMs: overrides.forwarder.timeoutMs } : {}),
          })
        : undefined)
    const forwarder = sink
      ? createForwarder({
          db: storage.db,
          sink,
          log,
          batchSize: env.sinkBatchSize,
          ...(env.sinkLeaseSeconds ? { leaseSeconds: env.sinkLeaseSeconds } : {}),
          ...(overrides.now ? { now: overrides.now } : {}),
          ...overrides.forwarder,
        })
      : undefined
    const deps: ReceiverDeps = {
      storage,
      admin: admin.auth,
      hub,
      keyFetch: overrides.keyFetch ?? outbound.keyFetch,
      agentFetch: overrides.agentFetch ?? outbound.agentFetch,
      allowInsecureKeyUrls: env.allowInsecureKeyUrls,
      deliveryLeaseSeconds: env.deliveryLeaseSeconds,
      ...(env.publicUrl ? { publicUrl: env.publicUrl } : {}),
      forwarding: forwarder !== undefined,
      ...(forwarder ? { relayStatus: () => forwarder.status() } : {}),
      ...(overrides.publication ? { publication: overrides.publication } : {}),
      // Not when the database is wrapped (tests inject faults into it, which the worker's connection would not see).
      ...(env.sqliteInboxThread && !overrides.database ? { inboxWorker: true } : {}),
      onWrite: () => {
        hub.kick()
        forwarder?.kick()
      },
      log,
      ...(overrides.now ? { now: overrides.now } : {}),
    }
    let closing: Promise<void> | undefined
    return {
      deps,
      admin,
      ...(forwarder ? { forwarder } : {}),
      close() {
        closing ??= (async () => {
          hub.close()
          await forwarder?.stop()
          await sink?.close().catch((error: unknown) => log({ sink: 'close_failed', error: String(error) }))
          await storage.close()
        })()
        return closing
      },
    }
  } catch (error) {
    await storage.close()
    throw error
  }
}
