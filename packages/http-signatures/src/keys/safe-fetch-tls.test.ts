import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSafeFetch } from './safe-fetch.js'
import { failure } from '../testing/test-server.js'

/** A throwaway self-signed certificate for keys.example.test, made with the openssl CLI (skipped without it). */
function makeCertificate(): { key: string; cert: string } | undefined {
  const directory = mkdtempSync(join(tmpdir(), 'adwire-tls-'))
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1']
        .concat(['-subj', '/CN=keys.example.test', '-addext', 'subjectAltName=DNS:keys.example.test'])
        .concat(['-keyout', join(directory, 'key.pem'), '-out', join(directory, 'cert.pem')]),
      { stdio: 'ignore' },
    )
    return {
      key: readFileSync(join(directory, 'key.pem'), 'utf8'),
      cert: readFileSync(join(directory, 'cert.pem'), 'utf8'),
    }
  } catch {
    return undefined
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
}

const credentials = makeCertificate()
let server: https.Server
let port: number
let servernames: (string | false | null)[] = []

beforeAll(async () => {
  if (!credentials) return
  server = https.createServer(credentials, (_request, response) => response.writeHead(200).end('{"ok":true}'))
  server.on('secureConnection', (socket) => servernames.push(socket.servername))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})
afterAll(() => {
  if (!credentials) return
  server.closeAllConnections()
  return new Promise<void>((resolve) => server.close(() => resolve()))
})

describe.skipIf(!credentials)('createSafeFetch over https', () => {
  const fetch = createSafeFetch({
    allowLoopback: true,
    lookup: async () => [{ address: '127.0.0.1', family: 4 }],
    tls: { ca: credentials?.cert },
  })

  it('connects to the pinned address and verifies the certificate against the host name (SNI)', async () => {
    servernames = []
    const response = await fetch(`https://keys.example.test:${port}/.well-known/jwks.json`)
    expect(response.status).toBe(200)
    expect(servernames).toEqual(['keys.example.test'])
  })

  it('fails when the certificate does not name the host', async () => {
    expect((await failure(fetch(`https://other.example.test:${port}/`))).code).toBe('fetch_failed')
    expect((await failure(createSafeFetch({ allowLoopback: true })(`https://127.0.0.1:${port}/`))).code).toBe(
      'fetch_failed',
    )
  })
})
