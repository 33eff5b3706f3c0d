import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { run, type Io } from './index.js'
import { readSse } from '@adwire/registry-client'

async function adwire(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const io: Io = {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    read: async () => new Uint8Array(),
  }
  const code = await run(argv, io)
  return { code, stdout, stderr }
}

describe('adwire receiver (usage; the commands against a running receiver are tested in apps/receiver)', () => {
  it('prints help for the group and each command', async () => {
    expect(await adwire('receiver', '--help')).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('register'),
    })
    expect(await adwire('receiver', 'events', '--help')).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('--follow'),
    })
    expect((await adwire('receiver')).code).toBe(2)
    expect((await adwire('receiver', 'delete')).code).toBe(2)
  })

  it('reports missing options as usage errors', async () => {
    const noUrl = await adwire('receiver', 'events', '--token', 't', '--registration', 'r')
    expect(noUrl.code).toBe(2)
    expect(noUrl.stderr).toContain('--url is required')
    const twoSources = await adwire(
      'receiver',
      'register',
      '--url',
      'http://127.0.0.1:1',
      '--token',
      't',
      '--jwks-uri',
      'https://a.example/j',
      '--hmac-secret-file',
      'x',
    )
    expect(twoSources.code).toBe(2)
    expect(
      (await adwire('receiver', 'register', '--url', 'ftp://x', '--token', 't', '--jwks-uri', 'https://a'))
        .code,
    ).toBe(2)
  })

  it('exits 1 when the receiver cannot be reached', async () => {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    await new Promise((resolve) => server.close(resolve))
    const answer = await adwire(
      'receiver',
      'events',
      '--url',
      `http://127.0.0.1:${port}`,
      '--token',
      't',
      '--registration',
      'r',
    )
    expect(answer.code).toBe(1)
    expect(answer.stderr).toContain('cannot reach')
  })
})

describe('readSse (the stream reader of adwire receiver events --follow)', () => {
  it('reads events split across chunks, with ids, names, comments and CRLF', async () => {
    const text =
      ': keepalive\n\nretry: 2000\nevent: ready\ndata: {}\n\nid: 1.0\r\nevent: delivery\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata: plain\n\n'
    const bytes = new TextEncoder().encode(text)
    // Every chunk size, so that each CRLF is split across two chunks at least once.
    for (let size = 1; size <= 9; size += 1) {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let index = 0; index < bytes.length; index += size)
            controller.enqueue(bytes.slice(index, index + size))
          controller.close()
        },
      })
      const events = []
      for await (const event of readSse(body)) events.push(event)
      expect(events, `chunks of ${size}`).toEqual([
        { event: 'ready', data: '{}' },
        { event: 'delivery', data: '{"a":\n1}', id: '1.0' },
        { event: 'message', data: 'plain', id: '1.0' },
      ])
    }
  })
})
