import type { ReceiverAnswer } from './types.js'

/** A receiver's answer: the HTTP status and a small JSON body, plus the headers AdCP asks for. */
export class Rejection extends Error {
  override readonly name = 'Rejection'
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
    readonly outcome: 'rejected' | 'conflict' | 'in_flight' | 'unavailable' | 'too_many' = 'rejected',
  ) {
    super(message)
  }
}

export function json(
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): ReceiverAnswer {
  return {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify(body),
  }
}

/** An answer as a web `Response`. */
export const toResponse = (answer: ReceiverAnswer): Response =>
  new Response(answer.body, { status: answer.status, headers: answer.headers })

export function rejectionAnswer(rejection: Rejection): ReceiverAnswer {
  return json(
    rejection.status,
    { error: { code: rejection.code, message: rejection.message } },
    rejection.headers,
  )
}

/** Seconds until `until`, at least 1: a Retry-After value. */
export const retryAfter = (until: number, now: number) => String(Math.max(1, Math.ceil(until - now)))
