import { describe, expect, it } from 'vitest'
import { EnvError, parseEnv } from './env.js'

describe('parseEnv', () => {
  it('defaults to port 4300 and the SQLite file under ./data', () => {
    expect(parseEnv({})).toEqual({
      port: 4300,
      database: { kind: 'sqlite', path: './data/receiver.sqlite' },
      allowInsecureKeyUrls: false,
      deliveryLeaseSeconds: 30,
      eventRetentionDays: 30,
      sqliteInboxThread: false,
      postgresInboxGroups: 2,
      sinkBatchSize: 10,
      http: {},
    })
    expect(parseEnv({ SQLITE_INBOX_THREAD: 'true' }).sqliteInboxThread).toBe(true)
    expect(() => parseEnv({ SQLITE_INBOX_THREAD: 'maybe' })).toThrow(/SQLITE_INBOX_THREAD/)
    expect(parseEnv({ POSTGRES_INBOX_GROUPS: '1' }).postgresInboxGroups).toBe(1)
    for (const value of ['0', '17', '1.5', 'two'])
      expect(() => parseEnv({ POSTGRES_INBOX_GROUPS: value })).toThrow(/POSTGRES_INBOX_GROUPS/)
  })

  it("reads the relay's lease and batch size", () => {
    expect(
      parseEnv({ SINK_URL: 'nats://127.0.0.1:4222', SINK_LEASE_SECONDS: '5', SINK_BATCH_SIZE: '50' }),
    ).toMatchObject({
      sinkUrl: 'nats://127.0.0.1:4222',
      sinkLeaseSeconds: 5,
      sinkBatchSize: 50,
    })
    for (const [name, value] of [
      ['SINK_LEASE_SECONDS', '0'],
      ['SINK_LEASE_SECONDS', '2.5'],
      ['SINK_LEASE_SECONDS', '3601'],
      ['SINK_BATCH_SIZE', '0'],
      ['SINK_BATCH_SIZE', '1001'],
      ['EVENT_RETENTION_DAYS', '0'],
      ['EVENT_RETENTION_DAYS', '1.5'],
      ['EVENT_RETENTION_DAYS', '3651'],
    ] as const)
      expect(() => parseEnv({ [name]: value })).toThrow(new RegExp(name))
  })

  it('reads PostgreSQL, the token, the downstream and the public URL', () => {
    expect(
      parseEnv({
        PORT: '8080',
        DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
        DATABASE_SCHEMA: 'receiver_a',
        ADMIN_TOKEN: 'a-long-enough-admin-token',
        DOWNSTREAM_URL: 'http://127.0.0.1:9000/events',
        PUBLIC_URL: 'https://hooks.buyer.example/adcp/',
        ALLOW_INSECURE_KEY_URLS: 'true',
        DELIVERY_LEASE_SECONDS: '5',
        EVENT_RETENTION_DAYS: '7',
        STREAM_TICKET_SECRET: 'a-stream-ticket-secret-of-32-characters',
        HTTP_REQUEST_TIMEOUT_MS: '60000',
        HTTP_MAX_CONNECTIONS: '4000',
      }),
    ).toEqual({
      port: 8080,
      database: {
        kind: 'postgres',
        connectionString: 'postgres://postgres@127.0.0.1:5432/test',
        schema: 'receiver_a',
      },
      adminToken: 'a-long-enough-admin-token',
      downstreamUrl: 'http://127.0.0.1:9000/events',
      publicUrl: 'https://hooks.buyer.example/adcp',
      allowInsecureKeyUrls: true,
      deliveryLeaseSeconds: 5,
      eventRetentionDays: 7,
      sqliteInboxThread: false,
      postgresInboxGroups: 2,
      sinkBatchSize: 10,
      streamTicketSecret: 'a-stream-ticket-secret-of-32-characters',
      http: { requestTimeoutMs: 60_000, maxConnections: 4000 },
    })
  })

  it('treats empty values as unset', () => {
    expect(parseEnv({ ADMIN_TOKEN: '', DOWNSTREAM_URL: '', PUBLIC_URL: '' })).not.toHaveProperty('adminToken')
  })

  it('names every bad variable', () => {
    const parse = () =>
      parseEnv({
        PORT: '70000',
        DATABASE_URL: 'mysql://x',
        ADMIN_TOKEN: 'short',
        PUBLIC_URL: 'ftp://x',
        DATABASE_SCHEMA: 'Bad-Name',
        DELIVERY_LEASE_SECONDS: '0.5',
        STREAM_TICKET_SECRET: 'too-short',
        HTTP_HEADERS_TIMEOUT_MS: '-1',
      })
    expect(parse).toThrow(EnvError)
    const message = (() => {
      try {
        parse()
      } catch (error) {
        return (error as Error).message
      }
    })()
    for (const name of [
      'PORT',
      'DATABASE_URL',
      'ADMIN_TOKEN',
      'PUBLIC_URL',
      'DATABASE_SCHEMA',
      'DELIVERY_LEASE_SECONDS',
      'STREAM_TICKET_SECRET',
      'HTTP_HEADERS_TIMEOUT_MS',
    ]) {
      expect(message).toContain(`${name}:`)
    }
  })
})
