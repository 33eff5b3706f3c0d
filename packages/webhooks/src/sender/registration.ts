import { assertHmacSecret, SignatureError } from '@adwire/http-signatures'
import { PushNotificationConfigSchema, toSchemaIssues } from '@adwire/schemas'
import { WebhookError } from '../errors.js'
import type {
  A2AVersion,
  LegacyAuthentication,
  SubscriberRegistration,
  WebhookRegistration,
} from './types.js'

/** A legacy scheme chosen by the buyer: exactly one, never combined with RFC 9421. */
export interface LegacyAuth {
  readonly scheme: 'HMAC-SHA256' | 'Bearer'
  readonly credentials: string
}

/** A registration checked and reduced to what one outbox entry needs. */
export interface ResolvedRegistration {
  readonly channel: 'adcp' | 'a2a' | 'subscriber'
  /** Subscriber registrations only. */
  readonly subscriberId?: string
  readonly destination: string
  readonly url: string
  readonly operationId?: string
  readonly token?: string
  readonly legacy?: LegacyAuth
  readonly context?: Readonly<Record<string, unknown>>
  /** A2A registrations only, when the registration names one. */
  readonly a2aVersion?: A2AVersion
  /** A2A registrations only: the A2A Task whose id and contextId the pushes carry. */
  readonly a2aTask?: { readonly id: string; readonly contextId: string }
}

/**
 * Task types whose callbacks report a change of state (a media buy, creatives, a signal activation, a
 * property or collection list, accounts, event sources, audiences, catalogs, logged events, rights): AdCP
 * sellers SHOULD refuse legacy Bearer authentication for them, since Bearer gives no body integrity. The
 * read-only task types (get_*, list_*, search_brands, media_buy_delivery reports) are not listed.
 * `build_creative` is listed: its result is the creative the buyer will traffic.
 */
export const MUTATING_TASK_TYPES: ReadonlySet<string> = new Set([
  'create_media_buy',
  'update_media_buy',
  'sync_creatives',
  'build_creative',
  'activate_signal',
  'create_property_list',
  'update_property_list',
  'delete_property_list',
  'create_collection_list',
  'update_collection_list',
  'delete_collection_list',
  'sync_accounts',
  'sync_event_sources',
  'sync_audiences',
  'sync_catalogs',
  'log_event',
  'acquire_rights',
  'update_rights',
])

/**
 * Refuses (`INVALID_REQUEST`) a legacy Bearer registration for a mutating task type (see
 * {@link MUTATING_TASK_TYPES}). Agents call it when a task request arrives, so the buyer hears it at once
 * rather than through a failed webhook; the sender calls it on every event too.
 *
 * @example
 * refuseBearerForMutatingTask(request.push_notification_config?.authentication, 'create_media_buy')
 * // throws WebhookError INVALID_REQUEST
 */
export function refuseBearerForMutatingTask(
  authentication: LegacyAuthentication | undefined,
  taskType: string,
): void {
  const schemes = isObject(authentication) ? authentication.schemes : undefined
  if (!Array.isArray(schemes) || !schemes.includes('Bearer')) return
  if (!MUTATING_TASK_TYPES.has(taskType)) return
  throw invalid(
    `legacy Bearer authentication is refused for ${taskType} webhooks: it gives no body integrity; register without authentication (RFC 9421) or with HMAC-SHA256`,
  )
}

/**
 * The stored header that carries a legacy credential from enqueue to the attempts (a restarted sender must be
 * able to sign the entry). Headers named `x-adwire-*` are internal: they are stripped before sending.
 */
export const LEGACY_AUTH_HEADER = 'x-adwire-legacy-auth'
const INTERNAL_PREFIX = 'x-adwire-'

const invalid = (message: string, cause?: unknown) =>
  new WebhookError('INVALID_REQUEST', message, cause === undefined ? undefined : { cause })

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const nonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== ''

function checkUrl(url: unknown): string {
  if (typeof url !== 'string') throw invalid('the registration needs a url')
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch (error) {
    throw invalid(`the registration url is not a URL: ${url}`, error)
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw invalid(`the registration url must be https (or http), not ${parsed.protocol}`)
  if (parsed.username || parsed.password) throw invalid('the registration url must not carry credentials')
  return url
}

function checkLegacy(authentication: LegacyAuthentication | undefined): LegacyAuth | undefined {
  if (authentication === undefined) return undefined
  const schemes = authentication?.schemes
  if (!Array.isArray(schemes) || schemes.length !== 1)
    throw invalid('authentication.schemes must name exactly one scheme (HMAC-SHA256 or Bearer)')
  const scheme = schemes[0]
  if (scheme !== 'HMAC-SHA256' && scheme !== 'Bearer')
    throw invalid(`authentication scheme "${String(scheme)}" is not supported (HMAC-SHA256 or Bearer)`)
  const credentials = authentication.credentials
  if (typeof credentials !== 'string' || credentials.length < 32)
    throw invalid('authentication.credentials must have at least 32 characters')
  if (scheme === 'HMAC-SHA256') {
    try {
      assertHmacSecret(credentials)
    } catch (error) {
      if (SignatureError.is(error)) throw invalid(`authentication.credentials: ${error.message}`, error)
      throw error
    }
  }
  return { scheme, credentials }
}

/**
 * Checks a registration and reduces it to what an outbox entry stores. An AdCP registration is validated
 * against `core/push-notification-config.json` and needs an `operation_id` (the envelope requires one and
 * it is never derived from the URL). Throws `INVALID_REQUEST`.
 */
export function resolveRegistration(
  registration: WebhookRegistration | SubscriberRegistration,
): ResolvedRegistration {
  if (!isObject(registration)) throw invalid('a registration is required')
  if ((registration as { channel?: unknown }).channel === 'subscriber')
    return resolveSubscriber(registration as unknown as SubscriberRegistration)
  return resolveTaskRegistration(registration as WebhookRegistration)
}

/** A notification_configs[] subscriber: a URL, a subscriber_id every payload echoes, an optional legacy scheme. */
function resolveSubscriber(subscriber: SubscriberRegistration): ResolvedRegistration {
  const config: unknown = subscriber.config
  if (!isObject(config)) throw invalid('the registration needs a config')
  const url = checkUrl(config.url)
  if (!nonEmptyString(config.subscriber_id))
    throw invalid('a notification config needs a subscriber_id (every payload echoes it)')
  const legacy = checkLegacy(config.authentication as LegacyAuthentication | undefined)
  return {
    channel: 'subscriber',
    destination: subscriber.destination ?? `subscriber:${config.subscriber_id}`,
    url,
    subscriberId: config.subscriber_id,
    ...(legacy ? { legacy } : {}),
  }
}

function resolveTaskRegistration(registration: WebhookRegistration): ResolvedRegistration {
  const { channel, config } = registration
  if (!isObject(config)) throw invalid('the registration needs a config')
  if (registration.context !== undefined && !isObject(registration.context))
    throw invalid('context must be a JSON object')
  if (channel === 'adcp') {
    const parsed = PushNotificationConfigSchema.safeParse(config)
    if (!parsed.success) {
      const first = toSchemaIssues(parsed.error.issues)[0]
      throw invalid(
        `invalid push_notification_config: ${first ? `${first.path || '(root)'}: ${first.message}` : 'schema mismatch'}`,
      )
    }
    const url = checkUrl(config.url)
    const operationId = config.operation_id
    if (typeof operationId !== 'string')
      throw invalid(
        'push_notification_config.operation_id is required: every payload echoes it and it is never derived from the URL',
      )
    const legacy = checkLegacy(config.authentication)
    return {
      channel,
      destination: registration.destination ?? operationId,
      url,
      operationId,
      ...(config.token !== undefined ? { token: config.token } : {}),
      ...(legacy ? { legacy } : {}),
      ...(registration.context ? { context: registration.context } : {}),
    }
  }
  if (channel === 'a2a') {
    const url = checkUrl(config.url)
    if (config.id !== undefined && typeof config.id !== 'string')
      throw invalid('the A2A config id must be a string')
    if (config.token !== undefined && (typeof config.token !== 'string' || /[\r\n]/.test(config.token)))
      throw invalid('the A2A token must be a string without line breaks')
    const legacy = checkLegacy(config.authentication)
    const version = registration.a2aVersion
    if (version !== undefined && version !== '0.3' && version !== '1.0')
      throw invalid(`a2aVersion must be "0.3" or "1.0", not ${String(version)}`)
    const task = registration.task
    if (
      task !== undefined &&
      (!isObject(task) || !nonEmptyString(task.id) || !nonEmptyString(task.contextId))
    )
      throw invalid('the A2A task must be {id, contextId}, both non-empty strings')
    return {
      channel,
      destination: registration.destination ?? config.id ?? url,
      url,
      ...(config.token !== undefined ? { token: config.token } : {}),
      ...(legacy ? { legacy } : {}),
      ...(registration.context ? { context: registration.context } : {}),
      ...(version ? { a2aVersion: version } : {}),
      ...(task ? { a2aTask: { id: task.id, contextId: task.contextId } } : {}),
    }
  }
  throw invalid(`unknown registration channel "${String(channel)}" (adcp or a2a)`)
}

/** The headers stored with an entry: content type, the A2A token, and the legacy credential (internal). */
export function storedHeaders(registration: ResolvedRegistration): Record<string, string> {
  return {
    'content-type': 'application/json',
    ...(registration.channel === 'a2a' && registration.token !== undefined
      ? { 'x-a2a-notification-token': registration.token }
      : {}),
    ...(registration.legacy ? { [LEGACY_AUTH_HEADER]: JSON.stringify(registration.legacy) } : {}),
  }
}

/** Splits stored headers into those to send and the legacy credential, if any. */
export function readStoredHeaders(stored: Readonly<Record<string, string>>): {
  headers: Record<string, string>
  legacy?: LegacyAuth
} {
  const headers: Record<string, string> = {}
  let legacy: LegacyAuth | undefined
  for (const [name, value] of Object.entries(stored)) {
    const lower = name.toLowerCase()
    if (lower === LEGACY_AUTH_HEADER) legacy = JSON.parse(value) as LegacyAuth
    else if (!lower.startsWith(INTERNAL_PREFIX)) headers[lower] = value
  }
  return legacy ? { headers, legacy } : { headers }
}
