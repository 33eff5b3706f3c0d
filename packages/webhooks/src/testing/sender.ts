/**
 * Test support (not exported by the package): a buyer endpoint on 127.0.0.1 that records every request and
 * answers from a script, and a fixed clock.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  generateSigningKey,
  verifyWebhook,
  type GeneratedSigningKey,
  type MemoryReplayStore,
} from '@adwire/http-signatures'
import { afterEach, beforeAll } from 'vitest'
import { MemoryOutboxStore } from '../memory-stores.js'
import { createWebhookSender } from '../sender/sender.js'
import type { WebhookRegistration, WebhookSenderOptions } from '../sender/types.js'

export interface ReceivedRequest {
  readonly method: string
  /** As the sender addressed it (`http://{Host}{path}`). */
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: Uint8Array
  readonly text: string
  /** Unix seconds of the injected clock when the request arrived, if the endpoint has one. */
  readonly at?: number
}

/** Answers one request. */
export type Responder = (request: ReceivedRequest, response: ServerResponse) => void | Promise<void>

/** Answers `status` with optional headers and body. */
export const reply =
  (status: number, headers: Record<string, string> = {}, body = ''): Responder =>
  (_request, response) => {
    response.writeHead(status, headers)
    response.end(body)
  }

/** Never answers (until the endpoint closes). */
export const hang = (): Responder => () => undefined

export interface TestEndpoint {
  /** Base URL, `http://127.0.0.1:{port}`. */
  readonly origin: string
  readonly requests: ReceivedRequest[]
  /** Queues answers for the next requests; after them every request gets `fallback`. */
  script(...responders: Responder[]): void
  /** Resolves when `count` requests have arrived. */
  waitFor(count: number): Promise<void>
  close(): Promise<void>
}

function headerRecord(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers))
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
  return headers
}

/** Starts an HTTP endpoint on an ephemeral port of 127.0.0.1. */
export async function startEndpoint(
  options: { fallback?: Responder; now?: () => number } = {},
): Promise<TestEndpoint> {
  const fallback = options.fallback ?? reply(200, { 'content-type': 'application/json' }, '{"ok":true}')
  const queue: Responder[] = []
  const requests: ReceivedRequest[] = []
  const waiters: Array<{ count: number; resolve: () => void }> = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = new Uint8Array(Buffer.concat(chunks))
      const received: ReceivedRequest = {
        method: request.method ?? '',
        url: `http://${request.headers.host}${request.url}`,
        headers: headerRecord(request),
        body,
        text: new TextDecoder().decode(body),
        ...(options.now ? { at: options.now() } : {}),
      }
      requests.push(received)
      for (const waiter of waiters.filter((candidate) => requests.length >= candidate.count)) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve()
      }
      void (queue.shift() ?? fallback)(received, response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    script: (...responders) => void queue.push(...responders),
    waitFor: (count) =>
      requests.length >= count
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ count, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A clock the test moves by hand (Unix seconds). */
export function manualClock(start = 1_776_520_800) {
  let now = start
  return {
    now: () => now,
    advance: (seconds: number) => void (now += seconds),
    set: (seconds: number) => void (now = seconds),
  }
}

/**
 * What most sender tests share, registered on the calling file's hooks: a signing key made once, endpoints
 * closed after each test, a sender on a memory outbox with a manual clock (jitter off unless overridden), and
 * buyer-side verification of a received request.
 */
export function senderTestKit(kid: string) {
  let key: GeneratedSigningKey | undefined
  const endpoints: TestEndpoint[] = []
  beforeAll(async () => {
    key = await generateSigningKey({ alg: 'ed25519', kid })
  })
  afterEach(async () => {
    await Promise.all(endpoints.splice(0).map((endpoint) => endpoint.close()))
  })
  const signingKey = () => {
    if (!key) throw new Error('the signing key is made in beforeAll')
    return key
  }
  return {
    get key() {
      return signingKey()
    },
    async endpoint(options: Parameters<typeof startEndpoint>[0] = {}) {
      const started = await startEndpoint(options)
      endpoints.push(started)
      return started
    },
    setup(overrides: Partial<WebhookSenderOptions> = {}) {
      const clock = manualClock()
      const outbox = new MemoryOutboxStore()
      const sender = createWebhookSender({
        outbox,
        key: signingKey().privateJwk,
        now: clock.now,
        random: () => 0,
        ...overrides,
      })
      return { clock, outbox, sender }
    },
    /**
     * A buyer endpoint and a sender delivering one at a time, with `registration(path)` building an MCP
     * registration to that endpoint and `bodies()` the JSON bodies it has received so far.
     */
    async buyerSetup(overrides: Partial<WebhookSenderOptions> = {}) {
      const buyer = await this.endpoint()
      const { clock, outbox, sender } = this.setup({ concurrency: 1, ...overrides })
      const registration = (path: string, operationId = 'op_buy'): WebhookRegistration => ({
        channel: 'adcp',
        config: { url: `${buyer.origin}/${path}`, operation_id: operationId },
      })
      const bodies = () =>
        buyer.requests.map((request) => JSON.parse(request.text) as Record<string, unknown>)
      return { buyer, clock, outbox, sender, registration, bodies }
    },
    /** Verifies a received request as a buyer would; pass one replay store for every attempt of a test. */
    verify(request: ReceivedRequest, replayStore: MemoryReplayStore, now: number) {
      return verifyWebhook(
        { method: request.method, url: request.url, headers: request.headers, body: request.body },
        { keys: signingKey().jwks, replayStore, now },
      )
    },
  }
}
