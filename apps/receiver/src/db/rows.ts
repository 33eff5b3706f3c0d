/** Row ↔ record mapping of the receiver's tables (the same column names on SQLite and PostgreSQL). */
import type { SqlValue } from '@adwire/sql'
import type {
  AuthConfig,
  EventRecord,
  FailureRecord,
  ForwardJob,
  RegistrationRecord,
  RegistrationShape,
} from './types.js'

export interface RegistrationRow {
  id: string
  auth_mode: string
  config: string
  shape: string | null
  token: string | null
  retry_horizon_seconds: number | null
  label: string | null
  created_at: number
  sender: string | null
  publisher_domain: string | null
  revocation_url: string | null
}

export interface EventRow {
  seq: number | string
  registration_id: string
  idempotency_key: string
  operation_id: string | null
  task_id: string | null
  task_type: string | null
  status: string | null
  received_at: number
  publications: number
}

export interface FailureRow {
  seq: number | string
  registration_id: string
  code: string
  http_status: number
  message: string | null
  at: number
}

export interface ForwardRow extends EventRow {
  sender: string
  terminal: number | boolean
  payload: string
  forward_fence: string
  forward_attempts: number
}

/**
 * The values of a registration row, in column order (id, auth_mode, config, shape, token, horizon, label,
 * created_at, sender, publisher_domain, revocation_url).
 */
export function registrationValues(record: RegistrationRecord): SqlValue[] {
  return [
    record.id,
    record.auth.mode,
    JSON.stringify(record.auth),
    record.shape ?? null,
    record.token ?? null,
    record.retryHorizonSeconds ?? null,
    record.label ?? null,
    record.createdAt,
    record.sender ?? null,
    record.publisherDomain ?? null,
    record.revocationUrl ?? null,
  ]
}

export function toRegistration(row: RegistrationRow): RegistrationRecord {
  return {
    id: row.id,
    auth: JSON.parse(row.config) as AuthConfig,
    ...(row.shape ? { shape: row.shape as RegistrationShape } : {}),
    ...(row.token ? { token: row.token } : {}),
    ...(row.retry_horizon_seconds !== null ? { retryHorizonSeconds: Number(row.retry_horizon_seconds) } : {}),
    ...(row.label ? { label: row.label } : {}),
    ...(row.sender ? { sender: row.sender } : {}),
    ...(row.publisher_domain ? { publisherDomain: row.publisher_domain } : {}),
    ...(row.revocation_url ? { revocationUrl: row.revocation_url } : {}),
    createdAt: Number(row.created_at),
  }
}

export function toEvent(row: EventRow): EventRecord {
  return {
    seq: Number(row.seq),
    registrationId: row.registration_id,
    idempotencyKey: row.idempotency_key,
    operationId: row.operation_id,
    taskId: row.task_id,
    taskType: row.task_type,
    status: row.status,
    receivedAt: Number(row.received_at),
    publications: Number(row.publications),
  }
}

export function toFailure(row: FailureRow): FailureRecord {
  return {
    seq: Number(row.seq),
    registrationId: row.registration_id,
    code: row.code,
    httpStatus: Number(row.http_status),
    ...(row.message ? { message: row.message } : {}),
    at: Number(row.at),
  }
}

export function toForwardJob(row: ForwardRow): ForwardJob {
  return {
    seq: Number(row.seq),
    fence: row.forward_fence,
    attempts: Number(row.forward_attempts),
    registrationId: row.registration_id,
    sender: row.sender,
    idempotencyKey: row.idempotency_key,
    operationId: row.operation_id,
    taskId: row.task_id,
    taskType: row.task_type,
    status: row.status,
    terminal: row.terminal === true || row.terminal === 1,
    receivedAt: Number(row.received_at),
    payload: row.payload,
  }
}

/** The columns of an event as the APIs read them. */
export const EVENT_COLUMNS =
  'seq, registration_id, idempotency_key, operation_id, task_id, task_type, status, received_at, publications'

export const FAILURE_COLUMNS = 'seq, registration_id, code, http_status, message, at'

export const REGISTRATION_COLUMNS =
  'id, auth_mode, config, shape, token, retry_horizon_seconds, label, created_at, sender, publisher_domain, revocation_url'
