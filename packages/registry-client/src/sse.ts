/** A small Server-Sent Events reader (the parts of the WHATWG event-stream format the registry uses). */

export interface SseMessage {
  event: string
  data: string
  id?: string
}

/**
 * Reads SSE messages from a response body until it ends. Comment lines and `retry:` are ignored; a message
 * without `event:` has the type `message`.
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  let event = ''
  let data: string[] = []
  let id: string | undefined
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      buffer += value
      let newline: number
      while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
        // A lone CR at the end of the buffer may be the first half of a CRLF: wait for more.
        if (newline === buffer.length - 1 && buffer.endsWith('\r')) break
        const line = buffer.slice(0, newline)
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1))
        if (line === '') {
          if (data.length > 0)
            yield { event: event || 'message', data: data.join('\n'), ...(id ? { id } : {}) }
          event = ''
          data = []
          continue
        }
        if (line.startsWith(':')) continue
        const colon = line.indexOf(':')
        const field = colon < 0 ? line : line.slice(0, colon)
        const raw = colon < 0 ? '' : line.slice(colon + 1)
        const text = raw.startsWith(' ') ? raw.slice(1) : raw
        if (field === 'event') event = text
        else if (field === 'data') data.push(text)
        else if (field === 'id') id = text
      }
    }
  } finally {
    await reader.cancel().catch(() => {})
  }
}
