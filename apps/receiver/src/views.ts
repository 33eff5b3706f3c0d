/** The JSON shapes the API and the stream send for events and verification failures. */
import type { EventRecord, FailureRecord } from './db/types.js'

const iso = (seconds: number) => new Date(Math.round(seconds * 1000)).toISOString()

/** An event as `GET /api/events` lists it. */
export function eventView(event: EventRecord) {
  return {
    idempotency_key: event.idempotencyKey,
    operation_id: event.operationId,
    task_id: event.taskId,
    status: event.status,
    received_at: iso(event.receivedAt),
    publications: event.publications,
  }
}

/** An event on the stream: the list shape plus its registration and task type. */
export function streamEventView(event: EventRecord) {
  return { registration_id: event.registrationId, task_type: event.taskType, ...eventView(event) }
}

export function failureView(failure: FailureRecord) {
  return {
    id: failure.seq,
    registration_id: failure.registrationId,
    code: failure.code,
    http_status: failure.httpStatus,
    message: failure.message ?? null,
    at: iso(failure.at),
  }
}
