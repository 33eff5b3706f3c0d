/** The auth test suite, run on SQLite and on PostgreSQL by the two `*.test.ts` files beside it. */
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { authDb } from '../auth/db.js'
import { ACCESS_TOKEN_TTL_MS } from '../auth/grants.js'
import { sha256Hex } from '../auth/secrets.js'
import type { AuthStore } from '../auth/index.js'
import {
  authorize,
  pkcePair,
  REDIRECT_URI,
  registerClient,
  startAuthServer,
  submitConsent,
  token,
  whoami,
  type AuthServer,
} from './auth-server.js'

export interface StoreFixture {
  store: AuthStore
  close(): Promise<void>
}

/** Declares the suite; `open` creates a fresh migrated store. */
export function authSuite(name: string, open: () => Promise<StoreFixture>): void {
  describe(`auth on ${name}`, () => {
    let fixture: StoreFixture
    let server: AuthServer
    let org: { id: string; apiKey: string }

    beforeAll(async () => {
      fixture = await open()
      server = await startAuthServer(fixture.store)
      org = await server.auth.createOrg('Acme Media')
    })

    afterAll(async () => {
      await server?.close()
      await fixture?.close()
    })

    it('publishes RFC 8414 and RFC 9728 metadata and a JWKS', async () => {
      const metadata = (await (
        await fetch(`${server.url}/.well-known/oauth-authorization-server`)
      ).json()) as Record<string, unknown>
      expect(metadata).toMatchObject({
        issuer: server.url,
        authorization_endpoint: `${server.url}/authorize`,
        token_endpoint: `${server.url}/token`,
        registration_endpoint: `${server.url}/register`,
        code_challenge_methods_supported: ['S256'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
      })
      const resource = await (await fetch(`${server.url}/.well-known/oauth-protected-resource/api`)).json()
      expect(resource).toEqual({
        resource: `${server.url}/api`,
        authorization_servers: [server.url],
        bearer_methods_supported: ['header'],
        scopes_supported: ['openid', 'profile', 'email'],
      })
      const jwks = (await (await fetch(metadata.jwks_uri as string)).json()) as JSONWebKeySet
      expect(jwks.keys).toHaveLength(1)
      expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' })
      expect(jwks.keys[0]).not.toHaveProperty('d')
    })

    it('creates organization API keys that authenticate and are stored only as hashes', async () => {
      expect(org.apiKey).toMatch(/^sk_[A-Za-z0-9_-]{43}$/)
      const rows = await authDb(fixture.store).all<{ key_hash: string }>(
        'SELECT key_hash FROM {api_keys} WHERE org_id = ?',
        [org.id],
      )
      expect(rows).toEqual([{ key_hash: sha256Hex(org.apiKey) }])
      expect(await whoami(server.url, org.apiKey)).toEqual({
        status: 200,
        body: { kind: 'org', id: org.id, orgId: org.id, orgName: 'Acme Media' },
      })
      expect((await whoami(server.url, `${org.apiKey}x`)).status).toBe(401)
      expect((await whoami(server.url)).status).toBe(401)
      expect((await whoami(server.url, 'not-a-token')).status).toBe(401)
      await expect(server.auth.createOrg('   ')).rejects.toThrow(/1 to 200 characters/)
    })

    it('runs the authorization code flow with PKCE to a user access token', async () => {
      const { clientId, code, verifier } = await authorize(server, org.apiKey)
      const tokens = await token(server.url, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        client_id: clientId,
        code_verifier: verifier,
      })
      expect(tokens.status).toBe(200)
      expect(tokens.body).toMatchObject({
        token_type: 'Bearer',
        expires_in: 3600,
        scope: 'openid profile email',
      })
      const accessToken = tokens.body.access_token as string
      const me = await whoami(server.url, accessToken)
      expect(me.status).toBe(200)
      expect(me.body).toMatchObject({ kind: 'user', orgId: org.id, orgName: 'Acme Media' })
      // The token verifies independently against the published JWKS.
      const jwks = (await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet
      const { payload, protectedHeader } = await jwtVerify(accessToken, createLocalJWKSet(jwks), {
        issuer: server.url,
        audience: `${server.url}/api`,
        currentDate: new Date(server.clock.now),
      })
      expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'at+jwt' })
      expect(payload).toMatchObject({
        sub: (me.body as { id: string }).id,
        org_id: org.id,
        client_id: clientId,
      })
    })

    it('rejects a wrong code_verifier and spends the code', async () => {
      const { clientId, code, verifier } = await authorize(server, org.apiKey)
      const fields = {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        client_id: clientId,
      }
      const bad = await token(server.url, { ...fields, code_verifier: pkcePair().verifier })
      expect(bad).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
      const retry = await token(server.url, { ...fields, code_verifier: verifier })
      expect(retry).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    })

    it('rejects a missing verifier, a wrong redirect_uri and another client', async () => {
      const first = await authorize(server, org.apiKey)
      const missing = await token(server.url, {
        grant_type: 'authorization_code',
        code: first.code,
        redirect_uri: REDIRECT_URI,
        client_id: first.clientId,
      })
      expect(missing).toMatchObject({ status: 400, body: { error: 'invalid_request' } })
      const second = await authorize(server, org.apiKey)
      const wrongRedirect = await token(server.url, {
        grant_type: 'authorization_code',
        code: second.code,
        redirect_uri: 'http://127.0.0.1:9/other',
        client_id: second.clientId,
        code_verifier: second.verifier,
      })
      expect(wrongRedirect).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
      const third = await authorize(server, org.apiKey)
      const otherClient = await token(server.url, {
        grant_type: 'authorization_code',
        code: third.code,
        redirect_uri: REDIRECT_URI,
        client_id: first.clientId,
        code_verifier: third.verifier,
      })
      expect(otherClient).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    })

    it('rotates refresh tokens and revokes the family when a rotated token is replayed', async () => {
      const { clientId, code, verifier } = await authorize(server, org.apiKey)
      const first = await token(server.url, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        client_id: clientId,
        code_verifier: verifier,
      })
      const refresh1 = first.body.refresh_token as string
      const second = await token(server.url, {
        grant_type: 'refresh_token',
        refresh_token: refresh1,
        client_id: clientId,
      })
      expect(second.status).toBe(200)
      const refresh2 = second.body.refresh_token as string
      expect(refresh2).not.toBe(refresh1)
      expect((await whoami(server.url, second.body.access_token as string)).status).toBe(200)
      // Replaying the rotated token fails and revokes the newer one too.
      const replay = await token(server.url, {
        grant_type: 'refresh_token',
        refresh_token: refresh1,
        client_id: clientId,
      })
      expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
      // Every access token of the family stops working with it.
      expect((await whoami(server.url, first.body.access_token as string)).status).toBe(401)
      expect((await whoami(server.url, second.body.access_token as string)).status).toBe(401)
      const afterReplay = await token(server.url, {
        grant_type: 'refresh_token',
        refresh_token: refresh2,
        client_id: clientId,
      })
      expect(afterReplay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    })

    it('revokes the tokens of a code presented twice', async () => {
      const { clientId, code, verifier } = await authorize(server, org.apiKey)
      const fields = {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        client_id: clientId,
        code_verifier: verifier,
      }
      const issued = await token(server.url, fields)
      expect(issued.status).toBe(200)
      const accessToken = issued.body.access_token as string
      expect((await whoami(server.url, accessToken)).status).toBe(200)
      expect((await token(server.url, fields)).body).toMatchObject({ error: 'invalid_grant' })
      // The access token the code produced is revoked too, not only its refresh token.
      expect((await whoami(server.url, accessToken)).status).toBe(401)
      const refresh = await token(server.url, {
        grant_type: 'refresh_token',
        refresh_token: issued.body.refresh_token as string,
        client_id: clientId,
      })
      expect(refresh).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    })

    it('rejects an expired access token; the refresh token still works', async () => {
      const { clientId, code, verifier } = await authorize(server, org.apiKey)
      const issued = await token(server.url, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        client_id: clientId,
        code_verifier: verifier,
      })
      const accessToken = issued.body.access_token as string
      expect((await whoami(server.url, accessToken)).status).toBe(200)
      server.clock.now += ACCESS_TOKEN_TTL_MS + 1000
      try {
        expect((await whoami(server.url, accessToken)).status).toBe(401)
        const refreshed = await token(server.url, {
          grant_type: 'refresh_token',
          refresh_token: issued.body.refresh_token as string,
          client_id: clientId,
        })
        expect(refreshed.status).toBe(200)
        expect((await whoami(server.url, refreshed.body.access_token as string)).status).toBe(200)
      } finally {
        server.clock.now -= ACCESS_TOKEN_TTL_MS + 1000
      }
    })

    it('rejects an expired authorization code', async () => {
      const { clientId, code, verifier } = await authorize(server, org.apiKey)
      server.clock.now += 11 * 60_000
      try {
        const late = await token(server.url, {
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT_URI,
          client_id: clientId,
          code_verifier: verifier,
        })
        expect(late).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
      } finally {
        server.clock.now -= 11 * 60_000
      }
    })

    it('shows the consent page and handles a wrong key, a denial and bad requests', async () => {
      const { body } = await registerClient(server.url)
      const clientId = body.client_id as string
      const { challenge } = pkcePair()
      const params = {
        client_id: clientId,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: 's1',
      }
      const page = await fetch(`${server.url}/authorize?${new URLSearchParams(params).toString()}`)
      expect(page.status).toBe(200)
      expect(page.headers.get('x-frame-options')).toBe('DENY')
      const html = await page.text()
      expect(html).toContain('Test app')
      expect(html).toContain('name="api_key"')

      const wrongKey = await submitConsent(server.url, {
        ...params,
        email: 'ana@example.com',
        api_key: 'sk_wrong',
        decision: 'approve',
      })
      expect(wrongKey.status).toBe(401)
      expect(wrongKey.text).toContain('not valid')

      const denied = await submitConsent(server.url, { ...params, decision: 'deny' })
      expect(denied.status).toBe(302)
      expect(denied.location?.searchParams.get('error')).toBe('access_denied')
      expect(denied.location?.searchParams.get('state')).toBe('s1')
      expect(denied.location?.searchParams.get('iss')).toBe(server.url)

      const plain = await fetch(
        `${server.url}/authorize?${new URLSearchParams({ ...params, code_challenge_method: 'plain' }).toString()}`,
        { redirect: 'manual' },
      )
      expect(plain.status).toBe(302)
      expect(new URL(plain.headers.get('location')!).searchParams.get('error')).toBe('invalid_request')

      const noPkce = await fetch(
        `${server.url}/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code' }).toString()}`,
        { redirect: 'manual' },
      )
      expect(new URL(noPkce.headers.get('location')!).searchParams.get('error')).toBe('invalid_request')

      const foreignRedirect = await fetch(
        `${server.url}/authorize?${new URLSearchParams({ ...params, redirect_uri: 'https://evil.example/cb' }).toString()}`,
        { redirect: 'manual' },
      )
      expect(foreignRedirect.status).toBe(400)
      expect(foreignRedirect.headers.get('location')).toBeNull()

      const unknownClient = await fetch(`${server.url}/authorize?client_id=nope&response_type=code`)
      expect(unknownClient.status).toBe(400)
    })

    it('validates dynamic client registrations and authenticates confidential clients', async () => {
      const insecure = await registerClient(server.url, { redirect_uris: ['http://example.com/cb'] })
      expect(insecure).toMatchObject({ status: 400, body: { error: 'invalid_redirect_uri' } })
      const fragment = await registerClient(server.url, { redirect_uris: ['https://app.example/cb#x'] })
      expect(fragment).toMatchObject({ status: 400, body: { error: 'invalid_redirect_uri' } })
      const badMethod = await registerClient(server.url, {
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'private_key_jwt',
      })
      expect(badMethod).toMatchObject({ status: 400, body: { error: 'invalid_client_metadata' } })
      const notJson = await fetch(`${server.url}/register`, { method: 'POST', body: 'x' })
      expect(notJson.status).toBe(400)

      const confidential = await registerClient(server.url, {
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'client_secret_basic',
      })
      expect(confidential.status).toBe(201)
      const clientId = confidential.body.client_id as string
      const secret = confidential.body.client_secret as string
      expect(secret).toMatch(/^cs_/)
      const { verifier, challenge } = pkcePair()
      const consent = await submitConsent(server.url, {
        client_id: clientId,
        response_type: 'code',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        email: 'bo@example.com',
        api_key: org.apiKey,
        decision: 'approve',
      })
      const code = consent.location!.searchParams.get('code')!
      const fields = {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
      }
      const basic = (s: string) => ({
        authorization: `Basic ${Buffer.from(`${clientId}:${s}`).toString('base64')}`,
      })
      const wrong = await token(server.url, fields, basic('cs_wrong'))
      expect(wrong).toMatchObject({ status: 401, body: { error: 'invalid_client' } })
      const withoutSecret = await token(server.url, { ...fields, client_id: clientId })
      expect(withoutSecret).toMatchObject({ status: 401, body: { error: 'invalid_client' } })
      const right = await token(server.url, fields, basic(secret))
      expect(right.status).toBe(200)
    })

    it('answers token-endpoint misuse with RFC 6749 errors', async () => {
      const { body } = await registerClient(server.url)
      const clientId = body.client_id as string
      expect(await token(server.url, { grant_type: 'password', client_id: clientId })).toMatchObject({
        status: 400,
        body: { error: 'unsupported_grant_type' },
      })
      expect(
        await token(server.url, { grant_type: 'refresh_token', refresh_token: 'rt_x', client_id: clientId }),
      ).toMatchObject({
        status: 400,
        body: { error: 'invalid_grant' },
      })
      const json = await fetch(`${server.url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
      expect(json.status).toBe(400)
      expect(await json.json()).toMatchObject({ error: 'invalid_request' })
    })

    it('keeps the signing key across restarts', async () => {
      const { clientId, code, verifier } = await authorize(server, org.apiKey)
      const issued = await token(server.url, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        client_id: clientId,
        code_verifier: verifier,
      })
      const restarted = await startAuthServer(fixture.store)
      try {
        const before = await (await fetch(`${server.url}/.well-known/jwks.json`)).json()
        const after = await (await fetch(`${restarted.url}/.well-known/jwks.json`)).json()
        expect(after).toEqual(before)
        // The restarted server has another issuer (its own port), so it rejects the first server's token...
        expect((await whoami(restarted.url, issued.body.access_token as string)).status).toBe(401)
        // ...but both share organizations and keys.
        expect((await whoami(restarted.url, org.apiKey)).status).toBe(200)
      } finally {
        await restarted.close()
      }
    })
  })
}
