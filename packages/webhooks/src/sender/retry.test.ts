import { describe, expect, it } from 'vitest'
import {
  backoffSeconds,
  outcomeOf,
  parseRetryAfter,
  signatureErrorCode,
  type AttemptResult,
} from './retry.js'

const policy = {
  horizonSeconds: 86_400,
  baseDelaySeconds: 2,
  maxDelaySeconds: 900,
  jitter: 0.5,
  maxRetryAfterSeconds: 3_600,
}
const response = (status: number, headers: Record<string, string> = {}): AttemptResult => ({
  kind: 'response',
  status,
  headers: new Headers(headers),
})
const decide = (result: AttemptResult, now = 1_000, deadlineAt = 90_000) =>
  outcomeOf(result, { now, attempt: 1, deadlineAt, policy, random: () => 0 })

describe('retry policy', () => {
  it('backs off exponentially, capped, with jitter taken off the delay', () => {
    const exact = { ...policy, jitter: 0 }
    expect([1, 2, 3, 4, 10, 11].map((attempt) => backoffSeconds(attempt, exact, Math.random))).toEqual([
      2, 4, 8, 16, 900, 900,
    ])
    expect(backoffSeconds(3, policy, () => 0.999)).toBeCloseTo(4.004)
    expect(backoffSeconds(3, policy, () => 0)).toBe(8)
  })

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('30', 0)).toBe(30)
    expect(parseRetryAfter(new Date(100_000 * 1000).toUTCString(), 99_990)).toBe(10)
    expect(parseRetryAfter(new Date(1_000 * 1000).toUTCString(), 2_000)).toBe(0)
    expect(parseRetryAfter('soon', 0)).toBeUndefined()
    expect(parseRetryAfter(null, 0)).toBeUndefined()
  })

  it('finds the webhook_* code of a Signature challenge only', () => {
    const code = (value: string) => signatureErrorCode(new Headers({ 'www-authenticate': value }))
    expect(code('Signature error="webhook_signature_replayed"')).toBe('webhook_signature_replayed')
    expect(code('Signature error=webhook_mode_mismatch')).toBe('webhook_mode_mismatch')
    expect(code('Bearer error="invalid_token"')).toBeUndefined()
    expect(code('Signature error="request_signature_invalid"')).toBeUndefined()
  })

  it('classifies answers', () => {
    expect(decide(response(200))).toEqual({ kind: 'delivered', httpStatus: 200 })
    expect(decide(response(202))).toEqual({ kind: 'delivered', httpStatus: 202 })
    for (const status of [500, 502, 503, 504, 429, 401])
      expect(decide(response(status))).toMatchObject({
        kind: 'retry',
        httpStatus: status,
        nextAttemptAt: 1_002,
      })
    for (const status of [400, 403, 404, 409, 410, 413, 415, 422, 301])
      expect(decide(response(status))).toMatchObject({
        kind: 'failed',
        httpStatus: status,
        activityStatus: 'failed',
      })
    const refused = decide(
      response(401, { 'www-authenticate': 'Signature error="webhook_signature_invalid"' }),
    )
    expect(refused).toMatchObject({ kind: 'retry', httpStatus: 401, nextAttemptAt: 1_002 })
    expect((refused as { error: string }).error).toContain('webhook_signature_invalid')
    expect(decide({ kind: 'timeout', message: 't' })).toMatchObject({
      kind: 'retry',
      activityStatus: 'timeout',
    })
    expect(decide({ kind: 'connection_error', message: 'c' })).toMatchObject({
      kind: 'retry',
      activityStatus: 'connection_error',
    })
  })

  it('never schedules past the deadline, and gives up at it', () => {
    expect(decide(response(503), 1_000, 1_001)).toMatchObject({ kind: 'retry', nextAttemptAt: 1_001 })
    expect(decide(response(503), 1_001, 1_001)).toMatchObject({
      kind: 'failed',
      error: expect.stringContaining('horizon'),
    })
  })
})
