/**
 * Per-registration key checks: a publisher's adagents.json `signing_keys[]` pins (`publisher_domain`) and the
 * seller's key revocation list (`revocation_url`). Real HTTP servers on 127.0.0.1 play the seller (brand.json
 * and JWKS), the publisher (adagents.json) and the revocation list host; storage on SQLite files and on
 * PostgreSQL (a fresh schema, dropped after).
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { generateSigningKey, type AdcpJwk } from '@adwire/http-signatures'
import { resolveTestPostgresUrl } from '@adwire/vitest-config'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStorage } from './db/open.js'
import { parseRegistrationInput } from './registration-input.js'
import type { RunningReceiver } from './service.js'
import {
  api,
  envelope,
  HMAC_SECRET,
  json,
  localServer,
  sendSigned,
  startTestReceiver,
  type Answer,
  type LocalServer,
} from './testing/receiver.js'

const url = await resolveTestPostgresUrl()
let receiver: RunningReceiver
let seller: LocalServer
let publisher: LocalServer
let lists: LocalServer
/** Pinned by the publisher for the seller's agent. */
let pinned: { privateJwk: AdcpJwk; publicJwk: AdcpJwk }
/** In the seller's JWKS but not pinned. */
let unpinned: { privateJwk: AdcpJwk; publicJwk: AdcpJwk }

const now = () => Math.floor(Date.now() / 1000)
const iso = (seconds: number) => new Date(seconds * 1000).toISOString()

beforeAll(async () => {
  const a = await generateSigningKey({ alg: 'ed25519', kid: 'seller-pinned' })
  const b = await generateSigningKey({ alg: 'ed25519', kid: 'seller-unpinned' })
  pinned = { privateJwk: a.privateJwk, publicJwk: a.jwks.keys[0]! }
  unpinned = { privateJwk: b.privateJwk, publicJwk: b.jwks.keys[0]! }
  seller = await localServer((request, response) => {
    if (request.url === '/.well-known/jwks.json') {
      return json(response, 200, { keys: [pinned.publicJwk, unpinned.publicJwk] })
    }
    if (request.url === '/.well-known/brand.json') {
      const jwks_uri = `${seller.url}/.well-known/jwks.json`
      return json(response, 200, {
        agents: [
          { type: 'sales', url: `${seller.url}/mcp`, jwks_uri },
          { type: 'sales', url: `${seller.url}/a2a`, jwks_uri },
        ],
      })
    }
    json(response, 404, {})
  })
  publisher = await localServer((request, response) => {
    if (request.url !== '/.well-known/adagents.json') return json(response, 404, {})
    // Pins carry the public key members only (adagents.json signing_keys[]).
    const { kid, kty, crv, x, alg } = pinned.publicJwk
    json(response, 200, {
      authorized_agents: [
        { url: `${seller.url}/mcp`, authorized_for: 'sales', signing_keys: [{ kid, kty, crv, x, alg }] },
        // The seller's A2A agent is authorized without pins: brand.json's keys apply.
        { url: `${seller.url}/a2a`, authorized_for: 'sales' },
      ],
    })
  })
  lists = await localServer((request, response) => {
    const t = now()
    if (request.url === '/revocations.json') {
      return json(response, 200, {
        version: 1,
        issuer: seller.url,
        updated: iso(t - 60),
        next_update: iso(t + 600),
        revoked_kids: ['seller-unpinned'],
      })
    }
    if (request.url === '/stale.json') {
      // Not refreshed by next_update + 4 intervals (interval 600 s): stale an hour ago.
      return json(response, 200, {
        version: 1,
        issuer: seller.url,
        updated: iso(t - 7200),
        next_update: iso(t - 6600),
        revoked_kids: [],
      })
    }
    json(response, 404, {})
  })
  receiver = await startTestReceiver({ ALLOW_INSECURE_KEY_URLS: '1' })
})

afterAll(async () => {
  await receiver?.close()
  await Promise.all([seller?.close(), publisher?.close(), lists?.close()])
})

const register = async (body: Record<string, unknown>) => {
  const answer = await api(receiver, '/api/registrations', { body })
  expect(answer.status, JSON.stringify(answer.body)).toBe(201)
  return answer.body as { id: string; url: string }
}

const brandJson = (agent = 'mcp') => ({
  auth: 'rfc9421',
  agent_url: `${seller.url}/${agent}`,
  brand_json_url: `${seller.url}/.well-known/brand.json`,
})

const expectRefused = (answer: Answer, code: string) => {
  expect(answer.status).toBe(401)
  expect(answer.headers.get('www-authenticate')).toBe(`Signature error="${code}"`)
}

describe('publisher_domain: adagents.json signing_keys[] pins', () => {
  it('accepts the pinned key and refuses a key the seller publishes but the publisher does not pin', async () => {
    const registration = await register({ ...brandJson(), publisher_domain: publisher.url })
    expect(await sendSigned(registration.url, envelope(), pinned.privateJwk)).toMatchObject({
      status: 200,
      body: { status: 'accepted' },
    })
    expectRefused(
      await sendSigned(registration.url, envelope(), unpinned.privateJwk),
      'webhook_signature_key_unknown',
    )
    const failures = await api(receiver, `/api/failures?registration=${registration.id}`)
    expect(failures.body.failures).toMatchObject([
      { code: 'webhook_signature_key_unknown', http_status: 401 },
    ])
    expect(publisher.requests.some((request) => request.url === '/.well-known/adagents.json')).toBe(true)
    expect((await api(receiver, `/api/registrations/${registration.id}`)).body).toMatchObject({
      publisher_domain: publisher.url,
    })
  })

  it("uses brand.json's keys for an agent the publisher authorizes without pins", async () => {
    const registration = await register({ ...brandJson('a2a'), publisher_domain: publisher.url })
    expect((await sendSigned(registration.url, envelope(), unpinned.privateJwk)).body).toEqual({
      status: 'accepted',
    })
  })

  it('fails closed (503, the seller retries) when adagents.json cannot be read', async () => {
    const registration = await register({ ...brandJson(), publisher_domain: seller.url })
    const answer = await sendSigned(registration.url, envelope(), pinned.privateJwk)
    expect(answer).toMatchObject({
      status: 503,
      body: { error: { code: 'verification_unavailable', message: 'the sender keys cannot be fetched now' } },
    })
    expect(answer.headers.get('retry-after')).toBe('30')
  })

  it('accepts every brand.json key without publisher_domain, as before', async () => {
    const registration = await register(brandJson())
    expect((await sendSigned(registration.url, envelope(), unpinned.privateJwk)).body).toEqual({
      status: 'accepted',
    })
    expect((await api(receiver, `/api/registrations/${registration.id}`)).body).not.toHaveProperty(
      'publisher_domain',
    )
  })
})

describe('revocation_url: the seller key revocation list', () => {
  const jwksOf = () => ({ keys: [pinned.publicJwk, unpinned.publicJwk] })

  it('refuses a revoked key and accepts the others', async () => {
    const registration = await register({
      auth: 'rfc9421',
      jwks: jwksOf(),
      revocation_url: `${lists.url}/revocations.json`,
    })
    expect((await sendSigned(registration.url, envelope(), pinned.privateJwk)).body).toEqual({
      status: 'accepted',
    })
    expectRefused(
      await sendSigned(registration.url, envelope(), unpinned.privateJwk),
      'webhook_signature_key_revoked',
    )
    expect((await api(receiver, `/api/registrations/${registration.id}`)).body).toMatchObject({
      revocation_url: `${lists.url}/revocations.json`,
    })
  })

  it('applies the list to brand.json keys under pins too', async () => {
    const registration = await register({
      ...brandJson('a2a'),
      publisher_domain: publisher.url,
      revocation_url: `${lists.url}/revocations.json`,
    })
    expectRefused(
      await sendSigned(registration.url, envelope(), unpinned.privateJwk),
      'webhook_signature_key_revoked',
    )
    expect((await sendSigned(registration.url, envelope(), pinned.privateJwk)).status).toBe(200)
  })

  it.each([
    ['stale (not refreshed by next_update + grace)', '/stale.json'],
    ['unreachable (404)', '/missing.json'],
  ])('fails closed when the list is %s', async (_name, listPath) => {
    const registration = await register({
      auth: 'rfc9421',
      jwks: jwksOf(),
      revocation_url: `${lists.url}${listPath}`,
    })
    expectRefused(
      await sendSigned(registration.url, envelope(), pinned.privateJwk),
      'webhook_signature_revocation_stale',
    )
  })

  it('accepts a key revoked elsewhere on a registration without a list, as before', async () => {
    const registration = await register({ auth: 'rfc9421', jwks: jwksOf() })
    expect((await sendSigned(registration.url, envelope(), unpinned.privateJwk)).body).toEqual({
      status: 'accepted',
    })
  })
})

describe('validation', () => {
  it.each([
    [
      'publisher_domain with a static JWKS',
      () => ({ auth: 'rfc9421', jwks: { keys: [pinned.publicJwk] }, publisher_domain: 'publisher.example' }),
      'publisher_domain',
    ],
    [
      'publisher_domain that is not a domain',
      () => ({ ...brandJson(), publisher_domain: 'not a domain' }),
      'publisher_domain',
    ],
    [
      'publisher_domain with a path',
      () => ({ ...brandJson(), publisher_domain: `${publisher.url}/adagents` }),
      'publisher_domain',
    ],
    [
      'revocation_url that is not http(s)',
      () => ({
        auth: 'rfc9421',
        jwks: { keys: [pinned.publicJwk] },
        revocation_url: 'ftp://lists.example/r.json',
      }),
      'revocation_url',
    ],
    [
      'revocation_url that is not a URL',
      () => ({ auth: 'rfc9421', jwks: { keys: [pinned.publicJwk] }, revocation_url: 'revocations' }),
      'revocation_url',
    ],
    [
      'revocation_url on an HMAC registration',
      () => ({ auth: 'hmac', secret: HMAC_SECRET, revocation_url: `${lists.url}/revocations.json` }),
      '',
    ],
  ])('answers 400 with details for %s', async (_name, body, detailPath) => {
    const answer = await api(receiver, '/api/registrations', { body: body() })
    expect(answer.status).toBe(400)
    expect(answer.body.error.code).toBe('invalid_registration')
    expect(answer.body.error.details.map((detail: { path: string }) => detail.path)).toContain(detailPath)
  })

  it('takes a bare domain (lower-cased) and refuses http origins unless insecure key URLs are allowed', () => {
    const body = {
      auth: 'rfc9421',
      agent_url: 'https://ads.seller.example/mcp',
      publisher_domain: 'Publisher.Example',
    }
    expect(parseRegistrationInput(body, { allowInsecureKeyUrls: false })).toMatchObject({
      input: { publisherDomain: 'publisher.example' },
    })
    expect(
      parseRegistrationInput(
        {
          ...body,
          publisher_domain: 'http://127.0.0.1:8080',
          revocation_url: 'http://127.0.0.1:8080/r.json',
        },
        { allowInsecureKeyUrls: false },
      ),
    ).toEqual({
      problems: [
        { path: 'publisher_domain', message: 'must be an https URL' },
        { path: 'revocation_url', message: 'must be an https URL' },
      ],
    })
  })
})

describe('storage', () => {
  const record = {
    id: 'pinned_reg',
    auth: { mode: 'rfc9421', agentUrl: 'https://ads.seller.example/mcp' } as const,
    publisherDomain: 'publisher.example',
    revocationUrl: 'https://ads.seller.example/revocations.json',
    createdAt: 1_776_520_900,
  }

  it('adds the columns to a version-2 SQLite file and keeps its registrations', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'adwire-v2-')), 'r.sqlite')
    const old = new Database(file)
    old.exec(`CREATE TABLE receiver_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
      INSERT INTO receiver_settings VALUES ('schema_version', '2');
      CREATE TABLE receiver_registrations (id TEXT PRIMARY KEY, auth_mode TEXT NOT NULL, config TEXT NOT NULL,
        shape TEXT, token TEXT, retry_horizon_seconds INTEGER, label TEXT, created_at REAL NOT NULL, sender TEXT);
      INSERT INTO receiver_registrations VALUES ('old_reg', 'hmac', '{"mode":"hmac","secret":"s"}', NULL, NULL,
        NULL, 'v2', 1776520800, 'https://seller.example/mcp');`)
    old.close()
    const storage = await openStorage({ kind: 'sqlite', path: file })
    try {
      const before = await storage.db.getRegistration('old_reg')
      expect(before).toMatchObject({ label: 'v2', sender: 'https://seller.example/mcp' })
      expect(before).not.toHaveProperty('publisherDomain')
      expect(before).not.toHaveProperty('revocationUrl')
      await storage.db.insertRegistration(record)
      expect(await storage.db.getRegistration('pinned_reg')).toEqual(record)
      expect(await storage.db.getSetting('schema_version')).toBe('4')
    } finally {
      await storage.close()
    }
  })

  it.skipIf(!url)('stores both fields on PostgreSQL, and upgrades a version-2 schema in place', async () => {
    const schema = `receiver_keys_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
    const client = new pg.Client({ connectionString: url! })
    await client.connect()
    try {
      await client.query(`CREATE SCHEMA "${schema}";
        CREATE TABLE "${schema}".receiver_settings (name text PRIMARY KEY, value text NOT NULL);
        INSERT INTO "${schema}".receiver_settings VALUES ('schema_version', '2');
        CREATE TABLE "${schema}".receiver_registrations (id text PRIMARY KEY, auth_mode text NOT NULL,
          config text NOT NULL, shape text, token text, retry_horizon_seconds integer, label text,
          created_at double precision NOT NULL, sender text);
        INSERT INTO "${schema}".receiver_registrations VALUES ('old_reg', 'hmac', '{"mode":"hmac","secret":"s"}',
          NULL, NULL, NULL, 'v2', 1776520800, NULL);`)
      const storage = await openStorage({ kind: 'postgres', connectionString: url!, schema })
      try {
        expect(await storage.db.getRegistration('old_reg')).toMatchObject({ label: 'v2' })
        await storage.db.insertRegistration(record)
        expect(await storage.db.getRegistration('pinned_reg')).toEqual(record)
        expect(await storage.db.getSetting('schema_version')).toBe('4')
      } finally {
        await storage.close()
      }
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await client.end()
    }
  })
})
