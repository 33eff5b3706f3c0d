/**
 * `POST /api/registrations` bodies: one authentication mode per registration (AdCP 3.1 security.mdx: a legacy
 * `authentication` block selects HMAC or Bearer, otherwise RFC 9421), checked here so that a registration
 * that could never verify a delivery is refused at once (400) rather than failing every delivery later.
 */
import { assertHmacSecret, jwksResolver } from '@adwire/http-signatures'
import { algorithmOfJwk, keyPurposeProblem } from '@adwire/http-signatures/internal'
import type { AdcpJwk } from '@adwire/http-signatures'
import { z } from 'zod'
import type { AuthConfig, RegistrationShape } from './db/types.js'

/** One problem with the input: where (a dotted path, `''` for the whole body) and what. */
export interface InputProblem {
  readonly path: string
  readonly message: string
}

export interface RegistrationInput {
  readonly auth: AuthConfig
  readonly shape?: RegistrationShape
  readonly token?: string
  readonly retryHorizonSeconds?: number
  readonly label?: string
  readonly sender?: string
  readonly publisherDomain?: string
  readonly revocationUrl?: string
}

const common = {
  shape: z
    .enum([
      'mcp',
      'a2a',
      'property-list',
      'collection-list',
      'artifact-push',
      'revocation-notification',
      'creative-status-changed',
      'creative-purged',
      'capabilities-changed',
      'account-status-changed',
    ])
    .optional(),
  /**
   * The seller these deliveries come from (its agent URL, say): registrations naming the same sender share one
   * dedup keyspace (several URLs of one seller, its MCP and A2A registrations, HMAC and RFC 9421 during a
   * migration). Printable ASCII without spaces.
   */
  sender: z
    .string()
    .trim()
    .min(1)
    .max(2048)
    .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces (the seller agent URL, say)')
    .optional(),
  /** The push_notification_config.token deliveries must echo (16 to 4096 characters). */
  push_token: z.string().min(16).max(4096).optional(),
  label: z.string().trim().min(1).max(100).optional(),
  delivery_retry_horizon_seconds: z
    .number()
    .int()
    .min(0)
    .max(30 * 86_400)
    .optional(),
}
const echoToken = z.string().min(16).max(4096).optional()
const url = z.string().trim().min(1).max(2048)

const InputSchema = z.discriminatedUnion('auth', [
  z.strictObject({
    auth: z.literal('rfc9421'),
    jwks: z.looseObject({ keys: z.array(z.record(z.string(), z.unknown())).min(1).max(100) }).optional(),
    jwks_uri: url.optional(),
    brand_json_url: url.optional(),
    agent_url: url.optional(),
    /**
     * How agent_url's keys are found: `brand_json` (default; the agent origin's brand.json, or brand_json_url)
     * or `capabilities` (the agent's get_adcp_capabilities → identity.brand_json_url, with key_origins checked).
     */
    key_discovery: z.enum(['brand_json', 'capabilities']).optional(),
    /** How the agent is called for its capabilities: `mcp` (default) or `a2a`. */
    agent_protocol: z.enum(['mcp', 'a2a']).optional(),
    /** The publisher whose adagents.json pins the agent's keys (with agent_url only). */
    publisher_domain: z.string().trim().min(1).max(2048).optional(),
    /** The seller's key revocation list. */
    revocation_url: url.optional(),
    token: echoToken,
    ...common,
  }),
  z.strictObject({ auth: z.literal('hmac'), secret: z.string(), token: echoToken, ...common }),
  /** For Bearer, `token` is the credential; the echo token is `push_token`. */
  z.strictObject({ auth: z.literal('bearer'), token: z.string(), ...common }),
])

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'] as const

/**
 * Validates a registration body. Resolves with the input or with every problem found.
 *
 * @example
 * parseRegistrationInput({ auth: 'hmac', secret: 'short' }, { allowInsecureKeyUrls: false })
 * // { problems: [{ path: 'secret', message: 'an HMAC secret needs at least 32 characters' }] }
 */
export function parseRegistrationInput(
  body: unknown,
  options: { readonly allowInsecureKeyUrls: boolean },
): { input: RegistrationInput } | { problems: InputProblem[] } {
  const parsed = InputSchema.safeParse(body)
  if (!parsed.success) {
    return {
      problems: parsed.error.issues.map((issue) => ({
        path: issue.path.join('.'),
        message:
          issue.code === 'invalid_union' && issue.path.length === 0
            ? 'auth must be "rfc9421", "hmac" or "bearer"'
            : issue.message,
      })),
    }
  }
  const value = parsed.data
  const problems: InputProblem[] = []
  const common = {
    ...(value.shape ? { shape: value.shape } : {}),
    ...(value.sender ? { sender: value.sender } : {}),
    ...(value.label ? { label: value.label } : {}),
    ...(value.delivery_retry_horizon_seconds !== undefined
      ? { retryHorizonSeconds: value.delivery_retry_horizon_seconds }
      : {}),
  }
  const pushToken = value.push_token ?? (value.auth === 'bearer' ? undefined : value.token)
  if (value.auth !== 'bearer' && value.token !== undefined && value.push_token !== undefined) {
    problems.push({ path: 'push_token', message: 'give the echo token as token or push_token, not both' })
  }
  const withToken = pushToken === undefined ? common : { ...common, token: pushToken }
  if (value.shape === 'property-list' && value.auth !== 'rfc9421') {
    problems.push({
      path: 'shape',
      message: 'property-list registrations authenticate with RFC 9421 only (no HMAC or Bearer)',
    })
  }
  let auth: AuthConfig | undefined
  if (value.auth === 'hmac') {
    problems.push(...secretProblems('secret', value.secret))
    auth = { mode: 'hmac', secret: value.secret }
  } else if (value.auth === 'bearer') {
    problems.push(...secretProblems('token', value.token))
    auth = { mode: 'bearer', token: value.token }
  } else {
    const sources = [value.jwks, value.jwks_uri, value.brand_json_url ?? value.agent_url].filter(
      (source) => source !== undefined,
    )
    if (sources.length !== 1) {
      problems.push({
        path: '',
        message: 'rfc9421 needs exactly one key source: jwks, jwks_uri, or agent_url (with brand_json_url)',
      })
    } else if (value.jwks) {
      problems.push(...jwksProblems(value.jwks))
      auth = { mode: 'rfc9421', jwks: value.jwks }
    } else if (value.jwks_uri) {
      problems.push(...urlProblems('jwks_uri', value.jwks_uri, options.allowInsecureKeyUrls))
      auth = { mode: 'rfc9421', jwksUri: value.jwks_uri }
    } else if (!value.agent_url) {
      problems.push({ path: 'agent_url', message: 'brand_json_url needs the agent_url its agents[] lists' })
    } else if (value.key_discovery === 'capabilities') {
      problems.push(...urlProblems('agent_url', value.agent_url, options.allowInsecureKeyUrls))
      if (value.brand_json_url) {
        problems.push({
          path: 'brand_json_url',
          message:
            "key_discovery capabilities reads brand_json_url from the agent's capabilities: do not give it",
        })
      }
      auth = {
        mode: 'rfc9421',
        agentUrl: value.agent_url,
        discovery: 'capabilities',
        ...(value.agent_protocol ? { agentProtocol: value.agent_protocol } : {}),
      }
    } else {
      problems.push(...urlProblems('agent_url', value.agent_url, options.allowInsecureKeyUrls))
      if (value.brand_json_url) {
        problems.push(...urlProblems('brand_json_url', value.brand_json_url, options.allowInsecureKeyUrls))
      }
      auth = {
        mode: 'rfc9421',
        agentUrl: value.agent_url,
        ...(value.brand_json_url ? { brandJsonUrl: value.brand_json_url } : {}),
      }
    }
  }
  if (value.auth === 'rfc9421' && value.key_discovery !== undefined && !value.agent_url) {
    problems.push({ path: 'key_discovery', message: 'key_discovery needs the agent_url whose keys it finds' })
  }
  if (
    value.auth === 'rfc9421' &&
    value.agent_protocol !== undefined &&
    value.key_discovery !== 'capabilities'
  ) {
    problems.push({
      path: 'agent_protocol',
      message: 'agent_protocol goes with key_discovery "capabilities"',
    })
  }
  const keyChecks: { publisherDomain?: string; revocationUrl?: string } = {}
  if (value.auth === 'rfc9421' && value.publisher_domain !== undefined) {
    const publisher = parsePublisherDomain(value.publisher_domain, options.allowInsecureKeyUrls)
    if (!value.agent_url) {
      problems.push({
        path: 'publisher_domain',
        message: "adagents.json pins an agent's keys: give agent_url (brand.json discovery) with it",
      })
    } else if (typeof publisher === 'string') keyChecks.publisherDomain = publisher
    else problems.push(publisher)
  }
  if (value.auth === 'rfc9421' && value.revocation_url !== undefined) {
    problems.push(...urlProblems('revocation_url', value.revocation_url, options.allowInsecureKeyUrls))
    keyChecks.revocationUrl = value.revocation_url
  }
  if (problems.length > 0 || !auth) return { problems }
  return { input: { auth, ...withToken, ...keyChecks } }
}

const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/**
 * A publisher domain as stored: a lower-case domain name (adagents.json is read over https), or an origin
 * URL (`https://…`, or `http://…` when insecure key URLs are allowed, for local development).
 */
function parsePublisherDomain(value: string, allowInsecure: boolean): string | InputProblem {
  const path = 'publisher_domain'
  if (!value.includes('://')) {
    const domain = value.toLowerCase()
    return DOMAIN.test(domain)
      ? domain
      : { path, message: 'must be a domain name such as publisher.example (or an origin URL)' }
  }
  const problem = urlProblems(path, value, allowInsecure)[0]
  if (problem) return problem
  const parsed = new URL(value)
  if (parsed.username || parsed.password || parsed.pathname !== '/' || parsed.search || parsed.hash) {
    return { path, message: 'an origin URL has no path, query, fragment or credentials' }
  }
  return parsed.origin
}

/** HMAC secrets and Bearer tokens: at least 32 characters (AdCP `credentials`), and not guessable-looking. */
function secretProblems(path: string, secret: string): InputProblem[] {
  try {
    assertHmacSecret(secret)
  } catch (error) {
    return [{ path, message: (error as Error).message }]
  }
  if (new Set(secret).size < 8) {
    return [{ path, message: 'too weak: use at least 8 distinct characters (a random value)' }]
  }
  return []
}

function urlProblems(path: string, value: string, allowInsecure: boolean): InputProblem[] {
  if (!URL.canParse(value)) return [{ path, message: 'must be an absolute URL' }]
  const protocol = new URL(value).protocol
  if (protocol === 'https:' || (allowInsecure && protocol === 'http:')) return []
  return [{ path, message: allowInsecure ? 'must be an http(s) URL' : 'must be an https URL' }]
}

/** Every key must be a public Ed25519 or P-256 key published for webhook verification (security.mdx step 8). */
function jwksProblems(jwks: { keys: Record<string, unknown>[] }): InputProblem[] {
  const problems: InputProblem[] = []
  jwks.keys.forEach((key, index) => {
    const path = `jwks.keys.${index}`
    const secret = PRIVATE_MEMBERS.filter((member) => member in key)
    if (secret.length > 0) {
      problems.push({ path, message: `is a private key (${secret.join(', ')}): register the public JWKS` })
      return
    }
    if (typeof key.kid !== 'string' || key.kid === '') {
      problems.push({ path: `${path}.kid`, message: 'every key needs a kid' })
      return
    }
    const jwk = key as unknown as AdcpJwk
    const algorithm = algorithmOfJwk(jwk)
    const problem = algorithm
      ? keyPurposeProblem(jwk, algorithm, 'webhook')
      : 'not an Ed25519 (OKP) or P-256 (EC) key with a matching alg'
    if (problem) problems.push({ path, message: problem })
  })
  if (problems.length === 0) {
    try {
      jwksResolver(jwks as unknown as { keys: AdcpJwk[] })
    } catch (error) {
      problems.push({ path: 'jwks', message: (error as Error).message })
    }
    const kids = jwks.keys.map((key) => key.kid)
    if (new Set(kids).size !== kids.length) problems.push({ path: 'jwks', message: 'kids must be unique' })
  }
  return problems
}
