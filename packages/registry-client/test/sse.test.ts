import { describe, expect, it } from 'vitest'
import { readSse } from '../src/index.js'

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk))
      controller.close()
    },
  })
}

describe('readSse', () => {
  it('parses events, multi-line data, comments and CRLF split across chunks', async () => {
    const messages = []
    for await (const message of readSse(
      streamOf([
        ': hello\n\nevent: feed\r',
        '\ndata: {"a":',
        '1}\r\n\r\ndata: one\ndata: two\nid: 7\n\n',
        'event: x\n',
      ]),
    )) {
      messages.push(message)
    }
    expect(messages).toEqual([
      { event: 'feed', data: '{"a":1}' },
      { event: 'message', data: 'one\ntwo', id: '7' },
    ])
  })
})
