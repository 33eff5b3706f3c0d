/**
 * Flight dates: `start_time` is `asap` (now on the seller's clock) or an ISO 8601 time; `end_time` an ISO 8601
 * time after it. A reversed flight or an end already past is VALIDATION_ERROR (error-compliance: the canonical code
 * of a business-rule violation); a start more than the grace period in the past is INVALID_REQUEST
 * (schema-validation's past_start_rejection asks that code). Both name the field.
 */
import { AgentError } from '@adwire/agent-server'
import { isoAt } from '../seller.js'

/** How far in the past a start may be (clock skew, slow review), seconds. */
export const START_GRACE_SECONDS = 300

const fail = (message: string, field: string) =>
  new AgentError('VALIDATION_ERROR', message, { field, status: 400, recovery: 'correctable' })

function parseTime(value: unknown, field: string): number {
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN
  if (Number.isNaN(ms)) throw fail(`${field} must be an ISO 8601 date-time`, field)
  return ms / 1000
}

/** The resolved flight as ISO times; `now` is Unix seconds. */
export function resolveFlight(
  startTime: unknown,
  endTime: unknown,
  now: number,
  fields: { start: string; end: string } = { start: 'start_time', end: 'end_time' },
): { start_time: string; end_time: string } {
  const start = startTime === 'asap' ? now : parseTime(startTime, fields.start)
  const end = parseTime(endTime, fields.end)
  if (end <= start) throw fail(`${fields.end} must be after ${fields.start}`, fields.end)
  if (end <= now) throw fail(`${fields.end} is in the past`, fields.end)
  if (startTime !== 'asap' && start < now - START_GRACE_SECONDS)
    throw new AgentError('INVALID_REQUEST', `${fields.start} is in the past; use "asap" or a future time`, {
      field: fields.start,
      status: 400,
      recovery: 'correctable',
    })
  return { start_time: isoAt(start), end_time: isoAt(end) }
}
