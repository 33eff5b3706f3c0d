import { describe, expect, it } from 'vitest'
import { EnvError, parseEnv } from './env.js'

describe('the registry environment', () => {
  it('defaults to port 4100, the SQLite file under ./data, the demo world and https-only crawling', () => {
    expect(parseEnv({})).toEqual({
      port: 4100,
      database: { kind: 'sqlite', path: './data/registry.sqlite' },
      seed: true,
      crawl: { allowPrivate: false, origins: {}, timeoutMs: 10_000, maxBytes: 1024 * 1024 },
      feedRetentionDays: 90,
      feedPruneIntervalSeconds: 3600,
      memberTier: 'member',
      http: {},
      rateLimits: { read: 600, write: 60, crawl: 10 },
      credentialKeys: [],
      monitoringPollSeconds: 60,
      agents: { allowPrivate: false, timeoutMs: 15_000 },
    })
    expect(parseEnv({ HTTP_REQUEST_TIMEOUT_MS: '60000' }).http).toEqual({ requestTimeoutMs: 60_000 })
  })

  it('reaches agents over https on public addresses unless ALLOW_PRIVATE_AGENTS, and reads the reference agent', () => {
    expect(
      parseEnv({
        ALLOW_PRIVATE_AGENTS: '1',
        AGENT_TIMEOUT_MS: '2000',
        COMPLIANCE_REFERENCE_AGENT_URL: 'https://creative.example/mcp',
      }).agents,
    ).toEqual({ allowPrivate: true, timeoutMs: 2000, referenceUrl: 'https://creative.example/mcp' })
    expect(() => parseEnv({ COMPLIANCE_REFERENCE_AGENT_URL: 'ftp://x' })).toThrow(EnvError)
    expect(() => parseEnv({ AGENT_TIMEOUT_MS: '10' })).toThrow(EnvError)
  })

  it('reads PostgreSQL, crawl origins, the tier and the feed settings', () => {
    const env = parseEnv({
      PORT: '0',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
      PUBLIC_URL: 'https://registry.example/',
      SEED: '0',
      ALLOW_PRIVATE_CRAWL: 'yes',
      CRAWL_ORIGINS: 'Pub.Example=http://127.0.0.1:8080, brand.example=https://mirror.example',
      FEED_RETENTION_DAYS: '7',
      FEED_PRUNE_INTERVAL_SECONDS: '0',
      MEMBER_TIER: 'Explorer',
      RATE_LIMIT_READ_PER_MINUTE: '0',
      RATE_LIMIT_WRITE_PER_MINUTE: '5',
    })
    expect(env).toMatchObject({
      port: 0,
      database: { kind: 'postgres', schema: 'adwire_registry' },
      publicUrl: 'https://registry.example',
      seed: false,
      crawl: {
        allowPrivate: true,
        origins: { 'pub.example': 'http://127.0.0.1:8080', 'brand.example': 'https://mirror.example' },
      },
      feedRetentionDays: 7,
      feedPruneIntervalSeconds: 0,
      memberTier: 'explorer',
      rateLimits: { read: 0, write: 5, crawl: 10 },
    })
  })

  it('reads the agent credentials keys (rotation list) and the monitoring poll', () => {
    const first = Buffer.alloc(32, 1)
    const second = Buffer.alloc(32, 2)
    const env = parseEnv({
      AGENT_CREDENTIALS_KEY: `${first.toString('base64')}, ${second.toString('base64url')}`,
      MONITORING_POLL_SECONDS: '5',
    })
    expect(env.credentialKeys).toEqual([first, second])
    expect(env.monitoringPollSeconds).toBe(5)
    for (const bad of [Buffer.alloc(16).toString('base64'), 'not base64!']) {
      expect(() => parseEnv({ AGENT_CREDENTIALS_KEY: bad })).toThrow(/AGENT_CREDENTIALS_KEY: key 1 /)
    }
    expect(() => parseEnv({ MONITORING_POLL_SECONDS: '0' })).toThrow(/MONITORING_POLL_SECONDS/)
  })

  it('names every bad variable', () => {
    let error: unknown
    try {
      parseEnv({ CRAWL_ORIGINS: 'pub.example', MEMBER_TIER: 'gold', CRAWL_TIMEOUT_MS: '5', PORT: 'x' })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(EnvError)
    for (const name of ['CRAWL_ORIGINS', 'MEMBER_TIER', 'CRAWL_TIMEOUT_MS', 'PORT']) {
      expect((error as Error).message).toMatch(new RegExp(`^  ${name}: `, 'm'))
    }
  })
})
