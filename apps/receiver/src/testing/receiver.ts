/**
 * Helpers for this app's tests (not part of the build): a receiver on a temporary SQLite file (or a given
 * database) listening on 127.0.0.1 port 0, signed and legacy deliveries, a tiny local HTTP server and an SSE
 * reader.
 */
import { mkdtempSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { signHmacWebhook, signWebhook, type AdcpJwk } from '@adwire/http-signatures'
import { readSse as readSseStream, type SseMessage } from '@adwire/registry-client'
import { parseEnv } from '../env.js'
import { startReceiver, type RunningReceiver, type StartOptions } from '../service.js'

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef'
export const HMAC_SECRET = 'hmac-secret-for-receiver-tests-0123456789'
export const BEARER_TOKEN = 'bearer-token-for-receiver-tests-abcdefghij'

/** A parsed JSON answer: tests read it freely. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Body = any

/** A delivery's answer. */
export interface Answer {
  readonly status: number
  readonly body: Body
  readonly headers: Headers
}

export const tempDir = (prefix = 'adwire-receiver-') => mkdtempSync(join(tmpdir(), prefix))

/** A receiver on 127.0.0.1, port 0; a fresh SQLite file unless `env.DATABASE_URL` says otherwise. */
export async function startTestReceiver(
  env: Record<string, string> = {},
  options: StartOptions = {},
): Promise<RunningReceiver> {
  return startReceiver(
    parseEnv({
      PORT: '0',
      DATABASE_URL: `sqlite:${join(tempDir(), 'receiver.sqlite')}`,
      ADMIN_TOKEN,
      ...env,
    }),
    { hubPollMs: 100, ...options },
  )
}

/** A call to the admin API with the token (unless `token` is given, or null for none). */
export async function api(
  receiver: { url: string },
  path: string,
  init: { method?: string; body?: unknown; token?: string | null; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const token = init.token === undefined ? ADMIN_TOKEN : init.token
  const response = await fetch(`${receiver.url}${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...init.headers,
    },
    ...(init.body === undefined
      ? {}
      : { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }),
  })
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body, headers: response.headers }
}

/** An MCP-shape webhook envelope (AdCP core/mcp-webhook-payload.json). */
export const envelope = (overrides: Record<string, unknown> = {}) => ({
  idempotency_key: `whk_${crypto.randomUUID()}`,
  operation_id: 'op_1',
  task_id: `task_${crypto.randomUUID().slice(0, 8)}`,
  task_type: 'create_media_buy',
  status: 'working',
  timestamp: new Date().toISOString(),
  ...overrides,
})

/** POSTs `payload` to `url` signed with RFC 9421 (a fresh nonce each call, as a seller's retry). */
export async function sendSigned(url: string, payload: unknown, key: AdcpJwk): Promise<Answer> {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload)
  const signed = await signWebhook(
    { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
    { key },
  )
  return send(url, body, signed.headers)
}

export async function sendHmac(url: string, payload: unknown, secret = HMAC_SECRET): Promise<Answer> {
  const body = JSON.stringify(payload)
  const headers = await signHmacWebhook(body, { secret })
  return send(url, body, { 'content-type': 'application/json', ...headers })
}

export async function sendBearer(url: string, payload: unknown, token = BEARER_TOKEN): Promise<Answer> {
  return send(url, JSON.stringify(payload), {
    'content-type': 'application/json',
    authorization: `Bearer ${token}`,
  })
}

async function send(url: string, body: string, headers: Readonly<Record<string, string>>): Promise<Answer> {
  const response = await fetch(url, { method: 'POST', headers, body })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers }
}

export interface LocalServer {
  readonly url: string
  readonly requests: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[]
  close(): Promise<void>
}

/** A plain node:http server on 127.0.0.1 (JWKS, brand.json, a downstream); `handler` answers each request. */
export async function localServer(
  handler: (request: { method: string; url: string; body: string }, response: ServerResponse) => void,
): Promise<LocalServer> {
  const requests: LocalServer['requests'] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const record = {
        method: request.method ?? 'GET',
        url: request.url ?? '/',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }
      requests.push(record)
      handler(record, response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export const json = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(JSON.stringify(body))
}

export type { SseMessage }

/** The oversized chunked sender of every service's body-limit tests (one copy, in service-kit's test kit). */
export { streamUntilAnswered } from '@adwire/service-kit/testing'

/**
 * Reads server-sent events from a fetch response until `stop` returns true or the stream ends (the parser is
 * `readSse` of @adwire/registry-client, the one the CLI follows the receiver with).
 */
export async function readSse(
  response: Response,
  stop: (message: SseMessage, all: SseMessage[]) => boolean,
): Promise<SseMessage[]> {
  const messages: SseMessage[] = []
  for await (const message of readSseStream(response.body!)) {
    messages.push(message)
    if (stop(message, messages)) break
  }
  return messages
}

/** Polls `check` until it returns a value (not undefined) or `timeoutMs` passes. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error('eventually: timed out')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
