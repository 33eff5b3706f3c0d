/** A sender that streams an oversized chunked body, for the body-limit tests of every service. */
import { request as httpRequest } from 'node:http'

export interface StreamOutcome {
  /** The answer's status; 0 when the connection broke before an answer could be read. */
  readonly status: number
  readonly body: string
  /** The bytes of chunks sent before the answer arrived. */
  readonly sentBeforeAnswer: number
  /** Why the connection broke, when it did. */
  readonly error?: string
}

/**
 * POSTs a chunked body of up to `total` bytes (`opening`, then 64 KiB chunks of "x", then `"}`), written as fast
 * as the socket takes it until an answer arrives; resolves with the answer and how much was sent before it, or
 * with `{ status: 0, error }` when the connection broke before an answer could be read. A service that enforces
 * its limit answers long before `total`.
 *
 * @example
 * const outcome = await streamUntilAnswered(`${service.url}/api/registrations`, headers, '{"label":"')
 * expect(outcome.status).toBe(413)
 */
export function streamUntilAnswered(
  url: string,
  headers: Record<string, string>,
  opening: string,
  total = 64 * 1024 * 1024,
): Promise<StreamOutcome> {
  const chunk = Buffer.alloc(64 * 1024, 'x')
  let sent = 0
  return new Promise((resolve) => {
    const outgoing = httpRequest(url, { method: 'POST', agent: false, headers })
    let answered = false
    outgoing.on('response', (response) => {
      answered = true
      const sentBeforeAnswer = sent
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (text: string) => (body += text))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body, sentBeforeAnswer }))
      response.on('error', (error) =>
        resolve({ status: response.statusCode ?? 0, body, sentBeforeAnswer, error: String(error) }),
      )
    })
    outgoing.on('error', (error) => {
      if (!answered) resolve({ status: 0, body: '', sentBeforeAnswer: sent, error: String(error) })
    })
    outgoing.write(opening)
    const pump = () => {
      while (!answered && sent < total) {
        sent += chunk.length
        if (!outgoing.write(chunk)) return void outgoing.once('drain', pump)
      }
      if (!answered) outgoing.end('"}')
    }
    pump()
  })
}
