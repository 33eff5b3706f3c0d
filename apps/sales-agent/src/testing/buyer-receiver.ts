/**
 * Test helper (not part of the build): a buyer's webhook receiver on 127.0.0.1 built from @adwire/webhooks
 * `createWebhookReceiver` on SQLite stores. RFC 9421 deliveries verify against the keys the sales agent
 * publishes at its JWKS (fetched over HTTP, as brand.json points at it); `/hooks/{shape}/{id}` registers
 * RFC 9421, `/hmac/{shape}/{id}` the legacy HMAC secret, `/bearer/{shape}/{id}` the legacy Bearer token.
 * `failNext(path, n)` answers the next n deliveries to a path 503 before the receiver sees them.
 */
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { jwksResolver, type Jwks } from '@adwire/http-signatures'
import { openSqliteStores } from '@adwire/store-sqlite'
import { createWebhookReceiver, type PayloadShape, type ReceivedEvent } from '@adwire/webhooks'
import { tempDir } from '../test-support.js'

export const LEGACY_SECRET = 'legacy-shared-secret-for-sales-tests-0123456789'

export interface Delivery {
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: string
  readonly status: number
  /** The receiver's answer body (`{"status":"accepted"}`, `duplicate`, an error). */
  readonly answer: string
}

export interface BuyerReceiver {
  readonly origin: string
  /** Every request that arrived, in order, with the answer it got. */
  readonly deliveries: Delivery[]
  /** Every event the receiver published (exactly once per event). */
  readonly published: ReceivedEvent[]
  failNext(path: string, count: number): void
  /** Resolves once `predicate` holds on `published` (polls; fails after `ms`). */
  waitFor(predicate: (published: ReceivedEvent[]) => boolean, ms?: number): Promise<void>
  close(): Promise<void>
}

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

export async function startBuyerReceiver(
  agentUrl: string,
  now: () => number = () => Date.now() / 1000,
): Promise<BuyerReceiver> {
  const jwks = (await (await fetch(`${agentUrl}/.well-known/jwks.json`)).json()) as Jwks
  const keys = jwksResolver(jwks, { signer: agentUrl })
  const stores = openSqliteStores({ path: join(tempDir('adwire-buyer-'), 'receiver.sqlite') })
  const published: ReceivedEvent[] = []
  const deliveries: Delivery[] = []
  const failures = new Map<string, number>()
  const receiver = createWebhookReceiver({
    registration: (request) => {
      const [, mode, shape, id] = new URL(request.url).pathname.split('/')
      if (!shape || !id) return undefined
      const auth =
        mode === 'hooks'
          ? ({ mode: 'rfc9421', keys } as const)
          : mode === 'hmac'
            ? ({ mode: 'hmac', secret: LEGACY_SECRET } as const)
            : mode === 'bearer'
              ? ({ mode: 'bearer', token: LEGACY_SECRET } as const)
              : undefined
      return auth
        ? { id: `${mode}-${shape}-${id}`, auth, shape: shape as PayloadShape, sender: agentUrl }
        : undefined
    },
    claims: stores.claims,
    convergence: stores.convergence,
    replayStore: stores.replay,
    publish: async (event) => void published.push(event),
    now,
  })
  const server = createServer((request, response) => {
    void (async () => {
      const body = await bodyOf(request)
      const path = request.url ?? '/'
      const headers = Object.fromEntries(
        Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
      )
      const failing = failures.get(path) ?? 0
      let status: number
      let text = ''
      let answerHeaders: Record<string, string> = {}
      if (failing > 0) {
        failures.set(path, failing - 1)
        status = 503
      } else {
        const answer = await receiver.handle(
          new Request(`http://${request.headers.host}${path}`, {
            method: request.method ?? 'POST',
            headers: headers,
            ...(request.method === 'POST' ? { body } : {}),
          }),
        )
        status = answer.status
        text = await answer.text()
        answerHeaders = Object.fromEntries(answer.headers)
      }
      deliveries.push({ path, headers, body: body.toString('utf8'), status, answer: text })
      response.writeHead(status, answerHeaders).end(text)
    })()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    deliveries,
    published,
    failNext: (path, count) => void failures.set(path, count),
    async waitFor(predicate, ms = 10_000) {
      const until = Date.now() + ms
      while (!predicate(published)) {
        if (Date.now() > until)
          throw new Error(
            `timed out; published: ${JSON.stringify(published.map((e) => [e.registrationId, e.data]))}`,
          )
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      stores.close()
    },
  }
}
