/**
 * Webhook payloads that are neither task envelopes nor list events but carry a required `idempotency_key`
 * (AdCP 3.1.19): the artifact push of content standards (`content-standards/artifact-webhook-payload.json`)
 * and the rights revocation notification (`brand/revocation-notification.json`). Both are deduplicated on
 * (verified sender, idempotency_key) like every other delivery; they name no task, so there is no terminal
 * convergence for them.
 *
 * @adwire/schemas generates no zod schema for these two files, so their required members are checked here;
 * the tests derive the required lists from the vendored JSON Schemas, so a drift shows.
 */
import { Rejection } from './respond.js'
import type { Envelope } from './envelope.js'

/** The shapes read here. */
export type KeyedEventShape = 'artifact-push' | 'revocation-notification'

/** `^[A-Za-z0-9_.:-]{16,255}$`: the idempotency_key pattern of both schemas. */
const KEY_PATTERN = /^[A-Za-z0-9_.:-]{16,255}$/

type Check = (value: unknown) => boolean
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const string: Check = (value) => typeof value === 'string'
const dateTime: Check = (value) =>
  typeof value === 'string' && /^\d{4}-\d\d-\d\dT/.test(value) && !Number.isNaN(Date.parse(value))
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
}

const invalid = (code: string, message: string) => new Rejection(400, code, message)

/**
 * Validates an artifact push or a revocation notification and returns its envelope: the idempotency key
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
  return { shape, idempotencyKey: key, terminal: false, data: payload }
}
