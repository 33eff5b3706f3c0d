/**
 * Rate limits of the community-mirror and policy operations the document declares 429 for, on SQLite and
 * PostgreSQL through `@adwire/registry-client`: mirror reads and bulk policy resolves share the read budget,
 * mirror writes and policy saves the write budget; a refusal is `rate_limited` with `retryAfter` and a
 * `Retry-After` header, and the budget refills as the (injected) clock moves.
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

const refused = async (promise: Promise<unknown>): Promise<RegistryError> => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  if (!RegistryError.is(error)) throw new Error('expected a refusal')
  return error
}

describe.each(backends)('mirror and policy rate limits on %s', (name, backend) => {
  let test: TestRegistry
  let clock = Date.parse('2026-06-01T00:00:00Z')

  beforeAll(async () => {
    if (!backend) return
    test = await startTestRegistry(backend, {
      seed: false,
      now: () => clock,
      env: { RATE_LIMIT_WRITE_PER_MINUTE: '2', RATE_LIMIT_READ_PER_MINUTE: '3' },
    })
  })

  afterAll(async () => {
    if (!backend) return
    await test?.registry.close()
    await test?.cleanup()
  })

  it.skipIf(!backend)(`limits mirror and policy writes per organization (${name})`, async () => {
    const org = await test.registry.createOrg('Busy Contributor')
    const client = clientOf(test.registry, org.apiKey)
    const body = {
      properties: [
        { property_type: 'website', name: 'P', identifiers: [{ type: 'domain', value: 'p.example' }] },
      ],
    }
    await client.request('PUT', '/api/registry/mirrors/busy', { body })
    await client.request('POST', '/api/policies/save', {
      body: {
        policy_id: 'busy_policy',
        version: '1',
        name: 'Busy',
        category: 'standard',
        enforcement: 'may',
        policy: 'x',
      },
    })
    const limited = await refused(client.request('PUT', '/api/registry/mirrors/busy', { body }))
    expect(limited).toMatchObject({ statusCode: 429, code: 'rate_limited', retryAfter: 30 })
    const raw = await fetch(`${test.registry.url}/api/policies/save`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(raw.status).toBe(429)
    expect(raw.headers.get('retry-after')).toBe('30')
    clock += 30_000
    expect(await client.request('PUT', '/api/registry/mirrors/busy', { body })).toMatchObject({
      status: 'pending',
    })
  })

  it.skipIf(!backend)(
    `limits anonymous mirror reads and bulk policy resolves per client IP (${name})`,
    async () => {
      const anonymous = clientOf(test.registry)
      await anonymous.request('GET', '/api/registry/mirrors')
      await refused(anonymous.request('GET', '/api/registry/mirrors/none'))
      await anonymous.request('POST', '/api/policies/resolve/bulk', {
        body: { policy_ids: ['gdpr_consent'] },
      })
      const limited = await refused(
        anonymous.request('POST', '/api/policies/resolve/bulk', { body: { policy_ids: ['gdpr_consent'] } }),
      )
      expect(limited).toMatchObject({ statusCode: 429, code: 'rate_limited', retryAfter: 20 })
      clock += 20_000
      expect((await anonymous.request<{ total: number }>('GET', '/api/registry/mirrors')).total).toBe(0)
    },
  )
})
