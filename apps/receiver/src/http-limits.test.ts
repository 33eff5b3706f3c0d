import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningReceiver } from './service.js'
import { api, envelope, HMAC_SECRET, sendHmac, startTestReceiver } from './testing/receiver.js'

let receiver: RunningReceiver

beforeAll(async () => {
  receiver = await startTestReceiver({
    HTTP_HEADERS_TIMEOUT_MS: '200',
    HTTP_REQUEST_TIMEOUT_MS: '300',
    HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000',
    HTTP_MAX_CONNECTIONS: '40',
  })
})

afterAll(async () => {
  await receiver?.close()
})

/** Writes `text` on a raw socket and resolves with everything the receiver sent once it closes the socket. */
function rawExchange(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(receiver.port, '127.0.0.1', () => socket.write(text))
    let received = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (received += chunk))
    socket.on('error', reject)
    socket.on('close', () => resolve(received))
  })
}

describe('HTTP limits (HTTP_* variables)', () => {
  it('applies them to the socket', () => {
    const { server } = receiver.listener
    expect([
      server.headersTimeout,
      server.requestTimeout,
      server.keepAliveTimeout,
      server.maxConnections,
    ]).toEqual([200, 300, 1000, 40])
  })

  it('answers 408 and closes a delivery whose body stalls, and keeps accepting deliveries meanwhile', async () => {
    const { body: registration } = await api(receiver, '/api/registrations', {
      body: { auth: 'hmac', secret: HMAC_SECRET },
    })
    const path = new URL(registration.url as string).pathname
    const stalled = rawExchange(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${receiver.port}\r\nContent-Type: application/json\r\n` +
        'Content-Length: 4096\r\n\r\n{"idempotency_key":',
    )
    expect((await sendHmac(registration.url as string, envelope())).body).toEqual({ status: 'accepted' })
    expect(await stalled).toMatch(/^HTTP\/1\.1 408 /)
  })
})
