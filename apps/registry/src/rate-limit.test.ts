/**
 * Rate limits on the operations the document declares 429 for, on SQLite and PostgreSQL through
 * `@adwire/registry-client`: per organization for credentialed calls, per client IP for anonymous ones, the
 * document's `RateLimitError` with `retryAfter` and a `Retry-After` header, refilled as the (injected) clock
 * moves.
 */
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { RegistryError } from '@adwire/registry-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientOf, startTestRegistry, type Backend, type TestRegistry } from './testing/registry.js'

const postgresUrl = await resolveTestPostgresUrl()
const backends: Array<[string, Backend | undefined]> = [
  ['sqlite', { kind: 'sqlite' }],
  ['postgres', postgresUrl ? { kind: 'postgres', url: postgresUrl } : undefined],
]

describe.each(backends)('rate limits on %s', (name, backend) => {
  let test: TestRegistry
  let clock = Date.parse('2026-06-01T00:00:00Z')

  beforeAll(async () => {
    if (!backend) return
    test = await startTestRegistry(backend, {
      now: () => clock,
      env: { RATE_LIMIT_WRITE_PER_MINUTE: '2', RATE_LIMIT_READ_PER_MINUTE: '3' },
    })
  })

  afterAll(async () => {
    if (!backend) return
    await test?.registry.close()
    await test?.cleanup()
  })

  it.skipIf(!backend)(`answers 429 with retryAfter and Retry-After, per organization (${name})`, async () => {
    const orgA = await test.registry.createOrg('Busy A')
    const orgB = await test.registry.createOrg('Quiet B')
    const a = clientOf(test.registry, orgA.apiKey)
    const b = clientOf(test.registry, orgB.apiKey)
    const save = (client: typeof a, n: number) =>
      client.request('POST', '/api/brands/save', { body: { domain: `limited-${n}.test`, brand_name: 'L' } })
    await save(a, 1)
    await save(a, 2)
    const refused = await save(a, 3).catch((error: unknown) => error)
    expect(RegistryError.is(refused)).toBe(true)
    expect(refused).toMatchObject({
      statusCode: 429,
      code: 'rate_limited',
      retryAfter: 30,
      isRetryable: true,
    })
    expect((refused as RegistryError).data).toMatchObject({ error: 'rate_limited', retryAfter: 30 })
    const raw = await fetch(`${test.registry.url}/api/brands/save`, {
      method: 'POST',
      headers: { authorization: `Bearer ${orgA.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ domain: 'limited-4.test', brand_name: 'L' }),
    })
    expect(raw.status).toBe(429)
    expect(raw.headers.get('retry-after')).toBe('30')
    // Another organization has its own budget; the first one's refills with time.
    await save(b, 5)
    clock += 30_000
    await save(a, 6)
  })

  it.skipIf(!backend)(`limits anonymous reads per client IP (${name})`, async () => {
    const anonymous = clientOf(test.registry)
    for (let i = 0; i < 3; i += 1) await anonymous.resolveBrand('acme-outdoor.example')
    const refused = await anonymous.resolveBrand('acme-outdoor.example').catch((error: unknown) => error)
    expect(refused).toMatchObject({ statusCode: 429, code: 'rate_limited', retryAfter: 20 })
    clock += 20_000
    expect((await anonymous.resolveBrand('acme-outdoor.example')).brand_name).toBe('Acme Outdoor')
  })
})
