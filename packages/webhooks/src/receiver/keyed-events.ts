/**
 * Webhook payloads that are neither task envelopes nor list events but carry a required `idempotency_key`
 * (AdCP 3.1.19): the artifact push of content standards (`content-standards/artifact-webhook-payload.json`),
 * the rights revocation notification (`brand/revocation-notification.json`), the account-level creative events
 * (`creative/creative-status-changed-webhook.json`, `creative/creative-purged-webhook.json`) and the
 * agent-level capabilities.changed (not in the 3.1.19 schemas: `idempotency_key` and `capabilities_version`,
 * as the seed says). All are deduplicated on
 * (verified sender, idempotency_key) like every other delivery; they name no task, so there is no terminal
 * convergence for them.
 *
 * @adwire/schemas generates no zod schema for these files, so their required members are checked here;
 * the tests derive the required lists from the vendored JSON Schemas, so a drift shows.
 */
import { Rejection } from './respond.js'
import type { Envelope } from './envelope.js'

/** The shapes read here. */
export type KeyedEventShape =
  | 'artifact-push'
  | 'revocation-notification'
  | 'creative-status-changed'
  | 'creative-purged'
  | 'capabilities-changed'
  | 'account-status-changed'

/** `^[A-Za-z0-9_.:-]{16,255}$`: the idempotency_key pattern of both schemas. */
const KEY_PATTERN = /^[A-Za-z0-9_.:-]{16,255}$/

type Check = (value: unknown) => boolean
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const string: Check = (value) => typeof value === 'string'
const dateTime: Check = (value) =>
  typeof value === 'string' && /^\d{4}-\d\d-\d\dT/.test(value) && !Number.isNaN(Date.parse(value))
const subscriber: Check = (value) => typeof value === 'string' && /^[A-Za-z0-9_.:-]{1,64}$/.test(value)
const artifactEntries: Check = (value) =>
  Array.isArray(value) &&
  value.every((entry) => isObject(entry) && isObject(entry.artifact) && dateTime(entry.delivered_at))

/** The required members of each payload (besides idempotency_key) and what each must be. */
export const KEYED_EVENT_MEMBERS: Readonly<Record<KeyedEventShape, Readonly<Record<string, Check>>>> = {
  'artifact-push': {
    media_buy_id: string,
    batch_id: string,
    timestamp: dateTime,
    artifacts: artifactEntries,
  },
  'revocation-notification': {
    rights_id: string,
    brand_id: string,
    reason: string,
    effective_at: dateTime,
  },
  'creative-status-changed': {
    notification_id: string,
    notification_type: (value) => value === 'creative.status_changed',
    fired_at: dateTime,
    subscriber_id: subscriber,
    account_id: string,
    creative_id: string,
    transition: (value) =>
      isObject(value) && string(value.from) && string(value.to) && dateTime(value.observed_at),
    reason_code: string,
    initiator: (value) => value === 'seller' || value === 'system',
  },
  'creative-purged': {
    notification_id: string,
    notification_type: (value) => value === 'creative.purged',
    fired_at: dateTime,
    subscriber_id: subscriber,
    account_id: string,
    creative_id: string,
    purge_kind: (value) => value === 'soft' || value === 'hard',
    purged_at: dateTime,
    reason_code: string,
    initiator: (value) => value === 'seller' || value === 'system',
  },
  'capabilities-changed': {
    capabilities_version: string,
  },
  'account-status-changed': {
    notification_id: string,
    notification_type: (value) => value === 'account.status_changed',
    fired_at: dateTime,
    subscriber_id: subscriber,
    account_id: string,
    transition: (value) => isObject(value) && string(value.to) && dateTime(value.observed_at),
  },
}

/** Optional members with a shape worth refusing early. */
const OPTIONAL_MEMBERS: Readonly<Record<KeyedEventShape, Readonly<Record<string, Check>>>> = {
  'artifact-push': { pagination: isObject, ext: isObject },
  'revocation-notification': {
    revoked_uses: (value) =>
      Array.isArray(value) && value.length > 0 && value.every((use) => typeof use === 'string'),
    context: isObject,
    ext: isObject,
  },
  'creative-status-changed': { ext: isObject },
  'creative-purged': { ext: isObject },
  'capabilities-changed': { fired_at: dateTime, subscriber_id: subscriber },
  'account-status-changed': { ext: isObject },
}

const invalid = (code: string, message: string) => new Rejection(400, code, message)

/**
 * Validates a keyed event (artifact push, revocation notification, creative event, capabilities.changed, account
 * status change) and returns its envelope: the idempotency key
 * (required; `missing_idempotency_key` without it), no task, `data` the whole payload. Other problems are
 * `invalid_envelope`, naming the member.
 */
export function readKeyedEvent(payload: Record<string, unknown>, shape: KeyedEventShape): Envelope {
  const key = payload.idempotency_key
  if (typeof key !== 'string')
    throw invalid('missing_idempotency_key', `the ${shape} has no idempotency_key; it cannot be deduplicated`)
  if (!KEY_PATTERN.test(key))
    throw invalid('invalid_envelope', `invalid ${shape}: idempotency_key must match ${KEY_PATTERN.source}`)
  for (const [member, check] of Object.entries(KEYED_EVENT_MEMBERS[shape])) {
    if (payload[member] === undefined)
      throw invalid('invalid_envelope', `invalid ${shape}: ${member} is required`)
    if (!check(payload[member]))
      throw invalid('invalid_envelope', `invalid ${shape}: ${member} has the wrong type or format`)
  }
  for (const [member, check] of Object.entries(OPTIONAL_MEMBERS[shape])) {
    if (payload[member] !== undefined && !check(payload[member]))
      throw invalid('invalid_envelope', `invalid ${shape}: ${member} has the wrong type or format`)
  }
  const notificationId = typeof payload.notification_id === 'string' ? payload.notification_id : undefined
  return {
    shape,
    idempotencyKey: key,
    ...(notificationId !== undefined ? { notificationId } : {}),
    terminal: false,
    data: payload,
  }
}
