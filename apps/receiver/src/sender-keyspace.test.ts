/**
 * Registrations that name their seller (`sender`) share one dedup keyspace: several URLs of one seller, and
 * its HMAC and RFC 9421 registrations during a migration. Property-list registrations are RFC 9421 only.
 * Over real HTTP on 127.0.0.1, SQLite files (and a version-1 file upgraded in place).
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { generateSigningKey, type AdcpJwk, type Jwks } from '@adwire/http-signatures'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStorage } from './db/open.js'
import type { RunningReceiver } from './service.js'
import { api, envelope, HMAC_SECRET, sendHmac, sendSigned, startTestReceiver } from './testing/receiver.js'

const SELLER = 'https://seller.example.com/mcp'
let receiver: RunningReceiver
let privateJwk: AdcpJwk
let jwks: Jwks

beforeAll(async () => {
  const key = await generateSigningKey({ alg: 'ed25519', kid: 'seller-key-1' })
  privateJwk = key.privateJwk
  jwks = key.jwks
  receiver = await startTestReceiver()
})
afterAll(async () => {
  await receiver?.close()
})

const register = async (body: Record<string, unknown>) => {
  const answer = await api(receiver, '/api/registrations', { body })
  expect(answer.status, JSON.stringify(answer.body)).toBe(201)
  return answer.body as { id: string; url: string }
}
const events = async (id: string) => (await api(receiver, `/api/events?registration=${id}`)).body.events

describe('registrations of one seller share a keyspace', () => {
  it('answers the same idempotency_key on a second URL of the seller as a duplicate; publications 1', async () => {
    const first = await register({ auth: 'rfc9421', jwks, shape: 'mcp', sender: SELLER })
    const second = await register({ auth: 'rfc9421', jwks, shape: 'mcp', sender: SELLER })
    const payload = envelope({ result: { percentage: 5 } })
    expect(await sendSigned(first.url, payload, privateJwk)).toMatchObject({
      status: 200,
      body: { status: 'accepted' },
    })
    expect(await sendSigned(second.url, payload, privateJwk)).toMatchObject({
      status: 200,
      body: { status: 'duplicate' },
    })
    expect(await events(first.id)).toMatchObject([
      { idempotency_key: payload.idempotency_key, publications: 1 },
    ])
    expect(await events(second.id)).toEqual([])
    expect((await api(receiver, `/api/registrations/${second.id}`)).body).toMatchObject({ sender: SELLER })
  })

  it('keeps registrations without a sender apart (the default: one keyspace per registration)', async () => {
    const first = await register({ auth: 'rfc9421', jwks })
    const second = await register({ auth: 'rfc9421', jwks })
    const payload = envelope()
    expect((await sendSigned(first.url, payload, privateJwk)).body).toEqual({ status: 'accepted' })
    expect((await sendSigned(second.url, payload, privateJwk)).body).toEqual({ status: 'accepted' })
    expect(await events(second.id)).toMatchObject([{ publications: 1 }])
  })

  it('maps an HMAC registration and its RFC 9421 successor to one keyspace during a migration', async () => {
    const hmac = await register({ auth: 'hmac', secret: HMAC_SECRET, sender: SELLER })
    const signed = await register({ auth: 'rfc9421', jwks, sender: SELLER })
    const payload = envelope({ status: 'input-required' })
    expect((await sendHmac(hmac.url, payload)).body).toEqual({ status: 'accepted' })
    expect((await sendSigned(signed.url, payload, privateJwk)).body).toEqual({ status: 'duplicate' })
    expect(await events(hmac.id)).toMatchObject([{ publications: 1 }])
    expect(await events(signed.id)).toEqual([])
  })

  it.each([
    ['an empty sender', { auth: 'rfc9421', jwks: { keys: [] }, sender: '' }, 'sender'],
    ['a sender with spaces', { auth: 'hmac', secret: HMAC_SECRET, sender: 'my seller' }, 'sender'],
  ])('answers 400 for %s', async (_name, body, path) => {
    const answer = await api(receiver, '/api/registrations', { body })
    expect(answer.status).toBe(400)
    expect(answer.body.error.details.map((detail: { path: string }) => detail.path)).toContain(path)
  })
})

describe('property-list registrations', () => {
  it.each([
    ['hmac', { auth: 'hmac', secret: HMAC_SECRET }],
    ['bearer', { auth: 'bearer', token: 'bearer-token-for-receiver-tests-abcdefghij' }],
  ])('are refused with %s authentication (400, shape)', async (_mode, body) => {
    const answer = await api(receiver, '/api/registrations', { body: { ...body, shape: 'property-list' } })
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatchObject({
      code: 'invalid_registration',
      details: [
        {
          path: 'shape',
          message: 'property-list registrations authenticate with RFC 9421 only (no HMAC or Bearer)',
        },
      ],
    })
  })

  it('are accepted with RFC 9421, and collection lists keep every mode', async () => {
    await register({ auth: 'rfc9421', jwks, shape: 'property-list' })
    await register({ auth: 'hmac', secret: HMAC_SECRET, shape: 'collection-list' })
  })
})

describe('database upgrade', () => {
  it('adds the sender column to a version-1 SQLite file and keeps its registrations', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'adwire-v1-')), 'r.sqlite')
    const old = new Database(file)
    old.exec(`CREATE TABLE receiver_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
      INSERT INTO receiver_settings VALUES ('schema_version', '1');
      CREATE TABLE receiver_registrations (id TEXT PRIMARY KEY, auth_mode TEXT NOT NULL, config TEXT NOT NULL,
        shape TEXT, token TEXT, retry_horizon_seconds INTEGER, label TEXT, created_at REAL NOT NULL);
      INSERT INTO receiver_registrations VALUES ('old_reg', 'hmac', '{"mode":"hmac","secret":"s"}', NULL, NULL,
        NULL, 'v1', 1776520800);`)
    old.close()
    const storage = await openStorage({ kind: 'sqlite', path: file })
    try {
      expect(await storage.db.getRegistration('old_reg')).toMatchObject({ id: 'old_reg', label: 'v1' })
      expect(await storage.db.getRegistration('old_reg')).not.toHaveProperty('sender')
      await storage.db.insertRegistration({
        id: 'new_reg',
        auth: { mode: 'hmac', secret: HMAC_SECRET },
        sender: SELLER,
        createdAt: 1_776_520_900,
      })
      expect(await storage.db.getRegistration('new_reg')).toMatchObject({ sender: SELLER })
      expect(await storage.db.getSetting('schema_version')).toBe('4')
    } finally {
      await storage.close()
    }
  })
})
