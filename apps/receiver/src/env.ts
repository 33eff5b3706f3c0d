/**
 * The receiver's configuration, read once from the environment with zod. Everything else is derived from it
 * in deps.ts; nothing else reads `process.env`.
 */
import {
  flag,
  httpFields,
  httpLimits,
  intIn,
  optionalHttpUrl,
  optionalText,
  readEnv,
  serviceFields,
  serviceSettings,
  type HttpLimitSettings,
  type ServiceSettings,
} from '@adwire/service-env'
import { z } from 'zod'
import { DEFAULT_EVENT_RETENTION_DAYS } from './db/schema.js'
import { SINK_SCHEMES, sinkScheme } from './sinks.js'

export { EnvError, type DatabaseConfig } from '@adwire/service-env'

/** The receiver's settings: the shared ones (port, host, database, public URL) and its own. */
export interface ReceiverEnv extends ServiceSettings {
  /** Set: this token; unset: the one stored in the database, generated at first start. */
  readonly adminToken?: string
  /** Every published event is POSTed here as JSON, with retries until it is accepted (SINK_URL's HTTP alias). */
  readonly downstreamUrl?: string
  /**
   * Where every published event is relayed: `amqp(s)://…?queue=…` (RabbitMQ), `redis(s)://…?stream=…` (Redis
   * Streams), `nats://` or `tls://…?stream=…&subject=…` (NATS JetStream) or `http(s)://…` (a JSON POST, as DOWNSTREAM_URL).
   */
  readonly sinkUrl?: string
  /**
   * How long a relay instance owns a batch of events it is publishing before another instance (or its own
   * restart) may take them over, seconds. Unset: a publish's timeout (10 s) plus 30 s.
   */
  readonly sinkLeaseSeconds?: number
  /** Events per publish into the sink. Default 10. */
  readonly sinkBatchSize: number
  /** The base of registration URLs (`{PUBLIC_URL}/webhooks/{id}`) and of the signed `@target-uri`. */
  readonly publicUrl?: string
  /** Development only: key URLs may be plain http and point at loopback or private addresses. */
  readonly allowInsecureKeyUrls: boolean
  /**
   * How long a delivery owns its event before a retry may take it over (its process may have died),
   * seconds. Default 30.
   */
  readonly deliveryLeaseSeconds: number
  /**
   * How long an event is kept after it was received, days (default 30): older events are expired by the sweep
   * (PostgreSQL: whole day partitions dropped; SQLite: deleted in batches), except those still waiting for the
   * forwarder, kept until forwarded.
   */
  readonly eventRetentionDays: number
  /**
   * SQLite: whether the transactional inbox (the statements and the commit of each group of deliveries) runs
   * on a worker thread with its own connection, off the event loop that parses, verifies and answers. Default
   * false: it frees about 40 % of the event loop's CPU a delivery but costs as much CPU on the worker, so it
   * raises a process's rate only where cores are idle beside it (measured on 2 cores: no gain, 0.1 ms more
   * latency).
   */
  readonly sqliteInboxThread: boolean
  /**
   * PostgreSQL: how many groups of deliveries the transactional inbox keeps in flight at once, each a
   * transaction on a connection of its own (`concurrency` of `createInbox` in @adwire/store-postgres). Default 2:
   * the next group is decided while the previous one commits (measured +20 % at 64 deliveries in flight on
   * one process); 1 commits one group at a time, larger groups, which costs the database less CPU a delivery
   * when several processes share it. Each group in flight holds one of the process's 10 pooled connections.
   */
  readonly postgresInboxGroups: number
  /**
   * The secret stream tickets are MACed with (every instance given it accepts the others' tickets); unset: the
   * admin token when this process knows it, else a random per-process secret.
   */
  readonly streamTicketSecret?: string
  /** The HTTP server's timeouts and connection cap (HTTP_*); unset ones keep the service-kit defaults. */
  readonly http: HttpLimitSettings
}

const printable = (min: number) => (value: string | undefined) =>
  value === undefined || (value.length >= min && /^[\x21-\x7e]+$/.test(value))

const EnvSchema = z
  .object({
    ...serviceFields({ name: 'receiver', port: 4300 }),
    ADMIN_TOKEN: optionalText.refine(printable(16), {
      message: 'ADMIN_TOKEN must be at least 16 printable ASCII characters without spaces',
    }),
    STREAM_TICKET_SECRET: optionalText.refine(printable(32), {
      message: 'STREAM_TICKET_SECRET must be at least 32 printable ASCII characters without spaces',
    }),
    DOWNSTREAM_URL: optionalHttpUrl('DOWNSTREAM_URL'),
    SINK_URL: optionalText.refine((value) => value === undefined || sinkScheme(value) !== undefined, {
      message: `SINK_URL must be an absolute URL with one of the schemes ${SINK_SCHEMES.join(', ')}`,
    }),
    SINK_LEASE_SECONDS: optionalText.refine(
      (value) => value === undefined || (/^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= 3600),
      { message: 'SINK_LEASE_SECONDS must be a whole number from 1 to 3600' },
    ),
    SINK_BATCH_SIZE: intIn('SINK_BATCH_SIZE', 1, 1000, 10),
    ALLOW_INSECURE_KEY_URLS: flag(),
    DELIVERY_LEASE_SECONDS: intIn('DELIVERY_LEASE_SECONDS', 1, 600, 30),
    EVENT_RETENTION_DAYS: intIn('EVENT_RETENTION_DAYS', 1, 3650, DEFAULT_EVENT_RETENTION_DAYS),
    SQLITE_INBOX_THREAD: flag(false),
    POSTGRES_INBOX_GROUPS: intIn('POSTGRES_INBOX_GROUPS', 1, 16, 2),
    ...httpFields(),
  })
  .refine((values) => !(values.SINK_URL && values.DOWNSTREAM_URL), {
    message: 'set SINK_URL or DOWNSTREAM_URL (its HTTP alias), not both',
    path: ['SINK_URL'],
  })

/**
 * Reads and checks the receiver's environment variables; throws {@link EnvError} naming each bad variable.
 *
 * @example
 * const env = parseEnv({ PORT: '4300', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' })
 * env.database // { kind: 'postgres', connectionString: 'postgres://…', schema: 'adwire_receiver' }
 */
export function parseEnv(source: Readonly<Record<string, string | undefined>> = process.env): ReceiverEnv {
  const values = readEnv(EnvSchema, source)
  return {
    ...serviceSettings(values),
    ...(values.ADMIN_TOKEN ? { adminToken: values.ADMIN_TOKEN } : {}),
    ...(values.DOWNSTREAM_URL ? { downstreamUrl: values.DOWNSTREAM_URL } : {}),
    ...(values.SINK_URL ? { sinkUrl: values.SINK_URL } : {}),
    ...(values.SINK_LEASE_SECONDS ? { sinkLeaseSeconds: Number(values.SINK_LEASE_SECONDS) } : {}),
    sinkBatchSize: values.SINK_BATCH_SIZE,
    allowInsecureKeyUrls: values.ALLOW_INSECURE_KEY_URLS,
    deliveryLeaseSeconds: values.DELIVERY_LEASE_SECONDS,
    eventRetentionDays: values.EVENT_RETENTION_DAYS,
    sqliteInboxThread: values.SQLITE_INBOX_THREAD,
    postgresInboxGroups: values.POSTGRES_INBOX_GROUPS,
    ...(values.STREAM_TICKET_SECRET ? { streamTicketSecret: values.STREAM_TICKET_SECRET } : {}),
    http: httpLimits(values),
  }
}
