import { describe, expect, it } from 'vitest'
import { EnvError, parseEnv } from './env.js'

describe('parseEnv', () => {
  it('has defaults for a local start', () => {
    expect(parseEnv({})).toEqual({
      port: 4200,
      database: { kind: 'sqlite', path: './data/creative-agent.sqlite' },
      tokens: [],
      allowInsecureWebhookUrls: false,
      idempotencyTtlSeconds: 86_400,
      creativeAgents: [],
      http: {},
    })
    expect(parseEnv({ HTTP_MAX_CONNECTIONS: '2000' }).http).toEqual({ maxConnections: 2000 })
  })

  it('reads PostgreSQL, the public URL, tokens with permissions, a signing key and the flags', () => {
    const jwk = { kty: 'OKP', crv: 'Ed25519', x: 'x', d: 'd', kid: 'k1' }
    const env = parseEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
      DATABASE_SCHEMA: 'creative_a',
      PUBLIC_URL: 'https://creative.example/agent/',
      TOKENS: 'buyer-1:tok_0123456789abcdef, viewer:tok_abcdef0123456789:read',
      SIGNING_KEY_JWK: JSON.stringify(jwk),
      ALLOW_INSECURE_WEBHOOK_URLS: 'true',
      IDEMPOTENCY_TTL_SECONDS: '3600',
      CREATIVE_AGENTS: 'https://video.example/mcp=Video studio,https://dooh.example/a2a',
    })
    expect(env).toMatchObject({
      port: 0,
      host: '127.0.0.1',
      database: { kind: 'postgres', schema: 'creative_a' },
      publicUrl: 'https://creative.example/agent',
      signingKey: jwk,
      allowInsecureWebhookUrls: true,
      idempotencyTtlSeconds: 3600,
      creativeAgents: [
        { agent_url: 'https://video.example/mcp', agent_name: 'Video studio' },
        { agent_url: 'https://dooh.example/a2a' },
      ],
    })
    expect(env.tokens).toEqual([
      {
        token: 'tok_0123456789abcdef',
        principal: { principal_id: 'buyer-1', permissions: { creatives: ['read', 'write'] } },
      },
      {
        token: 'tok_abcdef0123456789',
        principal: { principal_id: 'viewer', permissions: { creatives: ['read'] } },
      },
    ])
  })

  it.each([
    ['PORT', { PORT: 'eighty' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://x' }],
    ['DATABASE_SCHEMA', { DATABASE_SCHEMA: 'Bad-Name' }],
    ['PUBLIC_URL', { PUBLIC_URL: 'ftp://creative.example' }],
    ['TOKENS', { TOKENS: 'buyer-1:short' }],
    ['TOKENS', { TOKENS: 'buyer-1:tok_0123456789abcdef:read+fly' }],
    ['TOKENS', { TOKENS: 'a:tok_0123456789abcdef,b:tok_0123456789abcdef' }],
    ['SIGNING_KEY_JWK', { SIGNING_KEY_JWK: '{"kty":"OKP"}' }],
    ['ALLOW_INSECURE_WEBHOOK_URLS', { ALLOW_INSECURE_WEBHOOK_URLS: 'maybe' }],
    ['IDEMPOTENCY_TTL_SECONDS', { IDEMPOTENCY_TTL_SECONDS: '60' }],
    ['CREATIVE_AGENTS', { CREATIVE_AGENTS: 'video.example/mcp' }],
  ])('names %s when it is wrong, without repeating token values', (name, source) => {
    let error: unknown
    try {
      parseEnv(source)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(EnvError)
    expect((error as Error).message).toContain(`${name}:`)
    expect((error as Error).message).not.toContain('tok_0123456789abcdef')
  })
})
