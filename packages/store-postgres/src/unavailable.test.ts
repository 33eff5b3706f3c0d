import { dropSchema, freshSchemaName, resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import net from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { StoreError } from './errors.js'
import { openPostgresStores } from './open.js'

const url = await resolveTestPostgresUrl()

/** A port on 127.0.0.1 that nothing listens on (bound once by the OS, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  if (!StoreError.is(error)) throw new Error(`expected a StoreError, got ${String(error)}`)
  return error.code
}

const claimInput = {
  namespace: 'webhook',
  scope: 'sender',
  key: 'k',
  fingerprint: 'a'.repeat(64),
  now: 1_000,
  leaseSeconds: 30,
  retentionSeconds: 86_400,
} as const

describe('store_unavailable', () => {
  it('is what opening answers when nothing listens on the port', async () => {
    const port = await closedPort()
    expect(
      await codeOf(openPostgresStores({ connectionString: `postgres://postgres@127.0.0.1:${port}/test` })),
    ).toBe('store_unavailable')
  })

  if (!url) {
    it.skip('is what the stores answer when the server goes away after opening (needs ADWIRE_TEST_POSTGRES_URL)', () => {})
    return
  }

  const schema = freshSchemaName()
  afterAll(() => dropSchema(url, schema))

  it('is what the stores answer when the server goes away after opening', async () => {
    // A TCP proxy in front of the real server, so that the test can pull the plug.
    const target = new URL(url)
    const sockets = new Set<net.Socket>()
    const proxy = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname)
      for (const socket of [client, upstream]) {
        sockets.add(socket)
        socket.on('error', () => {})
        socket.on('close', () => sockets.delete(socket))
      }
      client.pipe(upstream).pipe(client)
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    const proxied = new URL(url)
    proxied.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`
    const stores = await openPostgresStores({ connectionString: proxied.toString(), schema })
    try {
      expect((await stores.claims.claim(claimInput)).kind).toBe('claimed')
      await new Promise<void>((resolve) => {
        proxy.close(() => resolve())
        for (const socket of sockets) socket.destroy()
      })
      expect(await codeOf(stores.claims.claim(claimInput))).toBe('store_unavailable')
      expect(await codeOf(stores.replay.remember('kid', 'n', 2_000, 10, 1_000))).toBe('store_unavailable')
      expect(await codeOf(stores.sweep(2_000))).toBe('store_unavailable')
    } finally {
      await stores.close()
    }
  })
})
