import type { TaskPushNotificationConfigInput } from '@adwire/webhooks'
import { AgentError } from './errors.js'
import { assertWebhookUrl } from './webhook-urls.js'

const LEGACY_SCHEMES = ['HMAC-SHA256', 'Bearer'] as const

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const nonEmpty = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined

/**
 * Reads the legacy `authentication` of an A2A push config: the AdCP and A2A 0.3 form
 * `{schemes: [scheme], credentials}` or the A2A 1.0 form `{scheme, credentials}`, scheme names
 * case-insensitive. Exactly one scheme, `HMAC-SHA256` or `Bearer`, and credentials of at least 32
 * characters; anything else is INVALID_REQUEST now rather than a webhook that never arrives.
 */
function readAuthentication(
  value: unknown,
  field: string,
): { schemes: readonly string[]; credentials: string } | undefined {
  if (value === undefined || value === null) return undefined
  if (!isObject(value)) throw new AgentError('INVALID_REQUEST', `${field} must be an object`, { field })
  const schemes = Array.isArray(value.schemes)
    ? value.schemes
    : nonEmpty(value.scheme) !== undefined
      ? [value.scheme]
      : []
  // The SDK's parsed form of "no authentication" is {scheme: '', credentials: ''}.
  if (schemes.length === 0 && nonEmpty(value.credentials) === undefined) return undefined
  const scheme =
    schemes.length === 1 && typeof schemes[0] === 'string'
      ? LEGACY_SCHEMES.find((known) => known.toLowerCase() === (schemes[0] as string).toLowerCase())
      : undefined
  if (!scheme)
    throw new AgentError(
      'INVALID_REQUEST',
      `${field} must name exactly one scheme, HMAC-SHA256 or Bearer (omit it for RFC 9421 signatures)`,
      { field: `${field}.schemes` },
    )
  const credentials = value.credentials
  if (typeof credentials !== 'string' || credentials.length < 32)
    throw new AgentError('INVALID_REQUEST', `${field}.credentials must have at least 32 characters`, {
      field: `${field}.credentials`,
    })
  return { schemes: [scheme], credentials }
}

/**
 * The A2A push registration of a SendMessage: `configuration.taskPushNotificationConfig` (A2A 1.0, AdCP 3.2)
 * or the earlier 3.x key `configuration.pushNotificationConfig` (A2A 0.3), with `url`, `id`, `token` and a
 * legacy `authentication` forwarded to the sender. `raw` is the request's `configuration` as sent (the SDK's
 * parsed form drops AdCP's `schemes` array on the 1.0 wire and the 0.3 key), `parsed` the SDK's. The URL must
 * pass the webhook URL policy of `push_notification_config` ({@link assertWebhookUrl}: https, a public
 * address, no userinfo; `allowInsecure` for development), else INVALID_REQUEST on `….url`.
 *
 * @example
 * readA2APush({ taskPushNotificationConfig: { url: 'https://buyer.example/a2a' } }, undefined, false)
 */
export function readA2APush(
  raw: unknown,
  parsed: { url: string; id: string; token: string; authentication: unknown } | undefined,
  allowInsecure = false,
): TaskPushNotificationConfigInput | undefined {
  const rawConfiguration = isObject(raw) ? raw : {}
  const [key, rawConfig] = isObject(rawConfiguration.taskPushNotificationConfig)
    ? ['taskPushNotificationConfig', rawConfiguration.taskPushNotificationConfig]
    : isObject(rawConfiguration.pushNotificationConfig)
      ? ['pushNotificationConfig', rawConfiguration.pushNotificationConfig]
      : ['taskPushNotificationConfig', undefined]
  const config: Record<string, unknown> | undefined = rawConfig ?? parsed
  const url = nonEmpty(config?.url)
  if (!config || url === undefined) return undefined
  const field = `configuration.${key}`
  assertWebhookUrl(url, allowInsecure, `${field}.url`)
  const id = nonEmpty(config.id)
  const token = nonEmpty(config.token)
  const authentication = readAuthentication(config.authentication, `${field}.authentication`)
  return {
    url,
    ...(id !== undefined ? { id } : {}),
    ...(token !== undefined ? { token } : {}),
    ...(authentication ? { authentication } : {}),
  }
}
