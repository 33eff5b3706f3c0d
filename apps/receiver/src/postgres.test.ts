import { generateSigningKey, type AdcpJwk, type Jwks } from '@adwire/http-signatures'
import { resolveTestPostgresUrl } from '@adwire/vitest-config'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningReceiver } from './service.js'
import { api, envelope, readSse, ADMIN_TOKEN, sendSigned, startTestReceiver } from './testing/receiver.js'

const url = await resolveTestPostgresUrl()
const schema = `receiver_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`

let privateJwk: AdcpJwk
let jwks: Jwks
let first: RunningReceiver
let second: RunningReceiver

async function dropSchema(): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await client.end()
  }
}

describe.skipIf(!url)('two receivers on one PostgreSQL schema', () => {
  beforeAll(async () => {
    const key = await generateSigningKey({ alg: 'ed25519', kid: 'pg-key' })
    privateJwk = key.privateJwk
    jwks = key.jwks
    const env = { DATABASE_URL: url!, DATABASE_SCHEMA: schema, ADMIN_TOKEN: '' }
    // Started together: the migrations and the admin token are settled once between them. The first commits
    // one inbox group at a time, the second keeps the default two in flight: exactly once either way.
    ;[first, second] = await Promise.all([
      startTestReceiver({ ...env, POSTGRES_INBOX_GROUPS: '1' }),
      startTestReceiver(env),
    ])
  })

  afterAll(async () => {
    await first?.close()
    await second?.close()
    if (url) await dropSchema()
  })

  it('share one generated admin token and every registration', async () => {
    const generated = [first.runtime.admin.generated, second.runtime.admin.generated].filter(Boolean)
    expect(generated).toHaveLength(1)
    const token = generated[0]!
    const created = await api(first, '/api/registrations', { body: { auth: 'rfc9421', jwks }, token })
    expect(created.status).toBe(201)
    const seen = await api(second, `/api/registrations/${created.body.id}`, { token })
    expect(seen).toMatchObject({ status: 200, body: { id: created.body.id, auth: 'rfc9421' } })
    expect((await api(second, '/api/registrations', { token: ADMIN_TOKEN })).status).toBe(403)
  })

  it('publish each event of a burst exactly once when every event reaches both, concurrently', async () => {
    const token = (first.runtime.admin.generated ?? second.runtime.admin.generated)!
    const { id } = (await api(first, '/api/registrations', { body: { auth: 'rfc9421', jwks }, token })).body
    const targets = [first, second].map((receiver) => `${receiver.url}/webhooks/${id}`)
    const burst = Array.from({ length: 40 }, (_, index) =>
      envelope({ operation_id: `op_${index % 4}`, status: index % 2 ? 'working' : 'submitted' }),
    )
    // A stream on the second instance sees what the first publishes. It replays from the start (since=0.0): the
    // deliveries below do not wait for the stream to subscribe, and a burst published before it would be missed.
    const live = fetch(`${second.url}/api/stream?registration=${id}&since=0.0`, {
      headers: { authorization: `Bearer ${token}` },
    }).then((response) =>
      readSse(response, (_message, all) => all.filter((m) => m.event === 'delivery').length >= burst.length),
    )

    /** Posts until the receiver answers 200, as a seller retries 503 (another instance is publishing it). */
    const deliver = async (target: string, payload: object) => {
      for (let attempt = 0; attempt < 50; attempt += 1) {
        const answer = await sendSigned(target, payload, privateJwk)
        if (answer.status === 200) return answer.body.status as string
        expect(answer.status).toBe(503)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      throw new Error('no 200 after 50 attempts')
    }
    const outcomes = await Promise.all(
      burst.flatMap((payload) => targets.map((target) => deliver(target, payload))),
    )
    expect(outcomes.filter((outcome) => outcome === 'accepted')).toHaveLength(burst.length)
    expect(outcomes.filter((outcome) => outcome === 'duplicate')).toHaveLength(burst.length)

    for (const receiver of [first, second]) {
      const { events } = (await api(receiver, `/api/events?registration=${id}`, { token })).body
      expect(events).toHaveLength(burst.length)
      expect(events.every((event: { publications: number }) => event.publications === 1)).toBe(true)
      expect(new Set(events.map((event: { idempotency_key: string }) => event.idempotency_key))).toEqual(
        new Set(burst.map((payload) => payload.idempotency_key)),
      )
    }
    const streamed = (await live).filter((message) => message.event === 'delivery')
    expect(streamed.map((message) => JSON.parse(message.data).idempotency_key).sort()).toEqual(
      burst.map((payload) => payload.idempotency_key).sort(),
    )
  })
})
