/**
 * Validation of an agent's OAuth client-credentials configuration (registry.yaml
 * `saveAgentOAuthClientCredentials`, its `CredentialSaveValidationError` codes and fields): field by field, the
 * token endpoint https (http only for loopback when private addresses are allowed), `$ENV:NAME` references
 * well formed, at most 8 resource URIs, the whole configuration at most 16 KiB of JSON.
 */
import type { ClientCredentialsConfig } from '../compliance/credentials.js'

/** The field a {@link CredentialFieldError} names (the document's enum). */
export type CredentialField =
  | 'oauth_client_credentials'
  | 'token_endpoint'
  | 'client_id'
  | 'client_secret'
  | 'scope'
  | 'resource'
  | 'audience'
  | 'auth_method'

/** A configuration the document refuses: `code` and `field` are the wire `CredentialSaveValidationError`. */
export class CredentialFieldError extends Error {
  override readonly name = 'CredentialFieldError'
  constructor(
    readonly code: string,
    readonly field: CredentialField,
    message: string,
  ) {
    super(message)
  }
}

const LOOPBACK_HOSTS = /^(localhost|127\.[0-9.]+|\[::1\])$/i
const ENV_REFERENCE = /^\$ENV:[A-Za-z_][A-Za-z0-9_]*$/
/** The longest whole configuration, characters of its JSON. */
const MAX_CREDENTIALS_JSON = 16 * 1024
const MAX_RESOURCES = 8

const fail = (code: string, field: CredentialField, message: string): never => {
  throw new CredentialFieldError(code, field, message)
}

/** Whether `value` is an acceptable token endpoint. */
function isTokenEndpoint(value: string, allowPrivate: boolean): boolean {
  if (!URL.canParse(value)) return false
  const endpoint = new URL(value)
  const local = allowPrivate && LOOPBACK_HOSTS.test(endpoint.hostname)
  return (
    (endpoint.protocol === 'https:' || (endpoint.protocol === 'http:' && local)) &&
    !endpoint.username &&
    !endpoint.password &&
    !endpoint.hash
  )
}

/** `resource`: one absolute URI or a list of 1 to 8. */
function resourceOf(value: unknown): string | string[] | undefined {
  if (value === undefined || value === null) return undefined
  const list = Array.isArray(value) ? (value as unknown[]) : [value]
  if (Array.isArray(value) && list.length === 0)
    fail('array_too_few', 'resource', 'resource must list at least one URI')
  if (list.length > MAX_RESOURCES) fail('array_too_many', 'resource', 'resource lists at most 8 URIs')
  for (const item of list) {
    if (typeof item !== 'string') fail('invalid_field_type', 'resource', 'resource must be URI strings')
    const uri = item as string
    if (uri.length > 2048) fail('field_too_long', 'resource', 'a resource is longer than 2048 characters')
    if (!URL.canParse(uri)) fail('invalid_url', 'resource', `resource ${uri} is not an absolute URI`)
  }
  return value as string | string[]
}

/**
 * The configuration a request body declares, or the first problem found.
 *
 * @throws {CredentialFieldError} with the document's code and field
 * @example
 * clientCredentialsOf({ token_endpoint: 'https://auth.example/token', client_id: 'id', client_secret: '$ENV:SECRET' }, false)
 */
export function clientCredentialsOf(body: unknown, allowPrivate: boolean): ClientCredentialsConfig {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    return fail('invalid_blob_shape', 'oauth_client_credentials', 'the body must be a JSON object')
  }
  const fields = body as Record<string, unknown>
  const text = (field: CredentialField, max: number, required: boolean): string | undefined => {
    const value = fields[field]
    if (value === undefined || value === null) {
      if (required) fail('missing_field', field, `${field} is required`)
      return undefined
    }
    if (typeof value !== 'string') return fail('invalid_field_type', field, `${field} must be a string`)
    if (required && value.trim() === '') fail('missing_field', field, `${field} is empty`)
    if (value.length > max) fail('field_too_long', field, `${field} is longer than ${max} characters`)
    return value
  }
  const tokenEndpoint = text('token_endpoint', 2048, true)!
  const clientId = text('client_id', 2048, true)!
  const clientSecret = text('client_secret', 8192, true)!
  const scope = text('scope', 1024, false)
  const audience = text('audience', 2048, false)
  if (!isTokenEndpoint(tokenEndpoint, allowPrivate)) {
    fail(
      'invalid_url',
      'token_endpoint',
      'token_endpoint must be an https URL without credentials or fragment (http only for localhost in development)',
    )
  }
  for (const [field, value] of [
    ['client_id', clientId],
    ['client_secret', clientSecret],
  ] as const) {
    if (value.startsWith('$ENV:') && !ENV_REFERENCE.test(value)) {
      fail('invalid_env_reference', field, `${field} must be $ENV:NAME with NAME letters, digits and _`)
    }
  }
  const resource = resourceOf(fields.resource)
  const authMethod = fields.auth_method
  if (authMethod !== undefined && authMethod !== null && authMethod !== 'basic' && authMethod !== 'body') {
    fail('invalid_auth_method_value', 'auth_method', 'auth_method must be basic or body')
  }
  if (fields.organization_id !== undefined && typeof fields.organization_id !== 'string') {
    fail('invalid_field_type', 'oauth_client_credentials', 'organization_id must be a string')
  }
  const config: ClientCredentialsConfig = {
    token_endpoint: tokenEndpoint,
    client_id: clientId,
    client_secret: clientSecret,
    ...(scope !== undefined ? { scope } : {}),
    ...(resource !== undefined ? { resource } : {}),
    ...(audience !== undefined ? { audience } : {}),
    ...(authMethod ? { auth_method: authMethod as 'basic' | 'body' } : {}),
  }
  if (JSON.stringify(config).length > MAX_CREDENTIALS_JSON) {
    fail('aggregate_too_long', 'oauth_client_credentials', 'the configuration is too long')
  }
  return config
}
