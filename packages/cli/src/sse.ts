/** One server-sent event (HTML Living Standard, "Server-sent events": event stream interpretation). */
export interface ServerSentEvent {
  readonly event: string
  readonly data: string
  readonly id?: string
}

/**
 * Reads a `text/event-stream` body: yields each event with data (comments and empty events skipped), with
 * its `event` name (default `message`) and the last `id` seen.
 *
 * @example
 * for await (const message of readServerSentEvents(response.body!)) console.log(message.event, message.data)
 */
export async function* readServerSentEvents(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<ServerSentEvent> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  let event = ''
  let data: string[] = []
  let id: string | undefined
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      buffer += value
      let newline: number
      while ((newline = buffer.search(/\r\n|\r|\n/)) !== -1) {
        // A CR that ends the chunk may be the first half of a CRLF split across chunks: wait for the next.
        if (buffer[newline] === '\r' && newline === buffer.length - 1) break
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
        const field = colon === -1 ? line : line.slice(0, colon)
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
        if (field === 'event') event = value
        else if (field === 'data') data.push(value)
        else if (field === 'id' && !value.includes('\0')) id = value
      }
    }
  } finally {
    await reader.cancel().catch(() => {})
  }
}
