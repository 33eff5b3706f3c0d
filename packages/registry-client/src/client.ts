/**
 * The registry client: named methods for the identity, brand, property, authorization, validation, discovery,
 * member-agent and change-feed operations, typed from the OpenAPI document (with the corrections of
 * overrides.ts), plus `raw` (the openapi-fetch client, every path of the document) and `request` (any path).
 */
import createClient, { type Client } from 'openapi-fetch'
import { CursorExpiredError, errorFromResponse, networkError, RegistryError } from './errors.js'
import type { paths } from './generated/registry.js'
import type {
  ExpandProductIdentifiersResponse,
  FeedPage,
  FeedStreamMessage,
  FindBrandsResponse,
  ProductAuthorizationResponse,
  ProductSelectorRequest,
  SearchResults,
} from './overrides.js'
import { readSse } from './sse.js'
import type {
  AdagentsAuthorizedAgent,
  CreateOrganizationInput,
  FeedEventType,
  MemberAgentInput,
  MemberAgentPatch,
  OperationBody,
  OperationQuery,
  OperationResponse,
  ResolvedBrand,
  ResolvedProperty,
} from './types.js'

export interface RegistryClientOptions {
  /** The registry's base URL, e.g. `http://127.0.0.1:4100` or `https://agenticadvertising.org`. */
  baseUrl: string
  /** The fetch to use (default: the global one). */
  fetch?: (request: Request) => Promise<Response>
  /** An organization API key (`sk_…`), sent as `Authorization: Bearer`. */
  apiKey?: string
  /** A user access token (JWT from the registry's OAuth flow), sent as `Authorization: Bearer`. */
  token?: string
  /** Called before each request for a current token (e.g. one your OAuth library refreshes). */
  getToken?: () => string | undefined | Promise<string | undefined>
}

export interface FeedQuery {
  /** The last `event_id` processed; omit to start at the beginning of the retention window. */
  cursor?: string | null
  /** Event types, each optionally ending in `*` (`authorization.*`). */
  types?: string | readonly (FeedEventType | `${string}*`)[]
  /** Page size, 1 to 10,000 (registry default 100). */
  limit?: number
  signal?: AbortSignal
}

export interface FeedStreamQuery extends FeedQuery {
  /** How often the registry polls for new events while the stream is open (5 to 60 s). */
  pollIntervalSeconds?: number
}

type Query = Record<string, string | number | boolean | undefined | null>

/** A request through `client.request`: any method and path, JSON in and out. */
export interface RawRequest {
  query?: Query
  body?: unknown
  headers?: Record<string, string>
  signal?: AbortSignal
}

export type RegistryClient = ReturnType<typeof createRegistryClient>

const feedTypes = (types: FeedQuery['types']): string | undefined =>
  types === undefined ? undefined : typeof types === 'string' ? types : types.join(',')

/**
 * Creates a registry client. Every method resolves to the parsed JSON answer or rejects with a
 * {@link RegistryError} (status, code, message).
 * @example
 * const registry = createRegistryClient({ baseUrl: 'http://127.0.0.1:4100', apiKey: process.env.REGISTRY_KEY })
 * const brand = await registry.resolveBrand('acme.example')
 * const { authorized } = await registry.checkPropertyAuthorization({
 *   agent_url: 'https://sales.example/mcp', identifier_type: 'domain', identifier_value: 'news.example',
 * })
 */
export function createRegistryClient(options: RegistryClientOptions) {
  const credentials = [options.apiKey, options.token, options.getToken].filter((value) => value !== undefined)
  if (credentials.length > 1) throw new TypeError('pass at most one of apiKey, token and getToken')
  let baseUrl: string
  try {
    baseUrl = new URL(options.baseUrl).toString().replace(/\/+$/, '')
  } catch {
    throw new TypeError(`baseUrl is not a URL: ${options.baseUrl}`)
  }
  const innerFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request))
  const bearer = async (): Promise<string | undefined> =>
    options.apiKey ?? options.token ?? (await options.getToken?.())

  /** Adds the credential and turns "no response" into a RegistryError. */
  const send = async (request: Request): Promise<Response> => {
    const credential = await bearer()
    if (credential && !request.headers.has('authorization')) {
      request.headers.set('authorization', `Bearer ${credential}`)
    }
    try {
      return await innerFetch(request)
    } catch (error) {
      if (request.signal.aborted) throw error
      throw networkError(request.url, error, baseUrl)
    }
  }

  const raw: Client<paths> = createClient<paths>({ baseUrl, fetch: send })

  async function unwrap<T>(
    call: Promise<{ data?: unknown; error?: unknown; response: Response }>,
  ): Promise<T> {
    const { data, error, response } = await call
    if (!response.ok) {
      throw typeof error === 'string'
        ? errorFromResponse({
            url: response.url,
            statusCode: response.status,
            responseBody: error,
            headers: response.headers,
          })
        : errorFromResponse({
            url: response.url,
            statusCode: response.status,
            data: error,
            headers: response.headers,
          })
    }
    return data as T
  }

  /** Any method and path: JSON body in, parsed JSON (or `undefined` for 204) out. */
  async function request<T = unknown>(method: string, path: string, init: RawRequest = {}): Promise<T> {
    const url = new URL(baseUrl + (path.startsWith('/') ? path : `/${path}`))
    for (const [name, value] of Object.entries(init.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value))
    }
    const headers = new Headers(init.headers)
    headers.set('accept', 'application/json')
    if (init.body !== undefined) headers.set('content-type', 'application/json')
    const response = await send(
      new Request(url, {
        method,
        headers,
        ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
        ...(init.signal ? { signal: init.signal } : {}),
      }),
    )
    const text = await response.text()
    let parsed: unknown
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      if (!response.ok)
        throw errorFromResponse({
          url: url.href,
          statusCode: response.status,
          responseBody: text,
          headers: response.headers,
        })
      throw new RegistryError({
        message: `the registry answered ${path} with non-JSON`,
        code: 'invalid_response',
        url: url.href,
        statusCode: response.status,
        responseBody: text,
      })
    }
    if (!response.ok)
      throw errorFromResponse({
        url: url.href,
        statusCode: response.status,
        data: parsed,
        responseBody: text,
        headers: response.headers,
      })
    return parsed as T
  }

  async function getFeed(query: FeedQuery = {}): Promise<FeedPage> {
    try {
      return await request<FeedPage>('GET', '/api/registry/feed', {
        query: { cursor: query.cursor, types: feedTypes(query.types), limit: query.limit },
        ...(query.signal ? { signal: query.signal } : {}),
      })
    } catch (error) {
      throw asCursorExpired(error, query.cursor ?? null)
    }
  }

  /**
   * Opens the SSE stream and yields its messages until the server closes it or `signal` aborts. A 410 before
   * the stream starts rejects with {@link CursorExpiredError}; an `error` message ends the stream with a
   * {@link RegistryError} (a {@link CursorExpiredError} for `cursor_expired`).
   */
  async function* streamFeed(query: FeedStreamQuery = {}): AsyncGenerator<FeedStreamMessage> {
    const url = new URL(`${baseUrl}/api/registry/feed/stream`)
    const params: Query = {
      cursor: query.cursor,
      types: feedTypes(query.types),
      limit: query.limit,
      poll_interval_seconds: query.pollIntervalSeconds,
    }
    for (const [name, value] of Object.entries(params)) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value))
    }
    const response = await send(
      new Request(url, {
        headers: { accept: 'text/event-stream' },
        ...(query.signal ? { signal: query.signal } : {}),
      }),
    )
    if (!response.ok || !response.body) {
      const text = await response.text()
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        body = undefined
      }
      throw asCursorExpired(
        errorFromResponse({
          url: url.href,
          statusCode: response.status,
          data: body,
          responseBody: text,
          headers: response.headers,
        }),
        query.cursor ?? null,
      )
    }
    try {
      for await (const message of readSse(response.body)) {
        // Messages already buffered when the caller aborted are not delivered.
        if (query.signal?.aborted) return
        let data: unknown
        try {
          data = JSON.parse(message.data)
        } catch {
          throw new RegistryError({
            message: `the feed stream sent a non-JSON ${message.event} message`,
            code: 'invalid_response',
            url: url.href,
            statusCode: 200,
            responseBody: message.data,
            isRetryable: true,
          })
        }
        if (message.event === 'error') {
          // An `error` message ends a stream that was answered 200: worth reconnecting unless the cursor expired.
          const error = errorFromResponse({ url: url.href, statusCode: 200, data, isRetryable: true })
          throw error.code === 'cursor_expired'
            ? new CursorExpiredError(query.cursor ?? null, { message: error.message, url: url.href, data })
            : error
        }
        if (message.event === 'feed' || message.event === 'heartbeat') {
          yield { event: message.event, data } as FeedStreamMessage
        }
      }
    } catch (error) {
      if (query.signal?.aborted) return
      throw error
    }
  }

  return {
    baseUrl,
    /** The openapi-fetch client over every path of the OpenAPI document; answers `{ data, error, response }`. */
    raw,
    request,

    // Onboarding and member agents (auth)
    /** `POST /api/organizations`: create or adopt the caller's organization. */
    createOrganization: (input: CreateOrganizationInput) =>
      unwrap<OperationResponse<'createOrganization', 201>>(raw.POST('/api/organizations', { body: input })),
    /** `GET /api/me/agents`. */
    listMemberAgents: (query: { org?: string } = {}) =>
      unwrap<OperationResponse<'listMemberAgents'>>(raw.GET('/api/me/agents', { params: { query } })),
    /** `POST /api/me/agents`: register (or update in place) an agent on the member profile. */
    registerMemberAgent: (input: MemberAgentInput, query: { org?: string } = {}) =>
      unwrap<OperationResponse<'registerMemberAgent'>>(
        raw.POST('/api/me/agents', { params: { query }, body: input }),
      ),
    /** `PATCH /api/me/agents/{url}`. */
    updateMemberAgent: (agentUrl: string, patch: MemberAgentPatch, query: { org?: string } = {}) =>
      unwrap<OperationResponse<'updateMemberAgent'>>(
        raw.PATCH('/api/me/agents/{url}', { params: { path: { url: agentUrl }, query }, body: patch }),
      ),
    /** `DELETE /api/me/agents/{url}`. */
    removeMemberAgent: (agentUrl: string, query: { org?: string } = {}) =>
      unwrap<void>(raw.DELETE('/api/me/agents/{url}', { params: { path: { url: agentUrl }, query } })),

    // Brand resolution
    /** `GET /api/brands/resolve`: a domain's canonical brand. */
    resolveBrand: (domain: string, query: { fresh?: boolean } = {}) =>
      unwrap<ResolvedBrand>(
        raw.GET('/api/brands/resolve', {
          params: { query: { domain, ...(query.fresh !== undefined ? { fresh: String(query.fresh) } : {}) } },
        } as never),
      ),
    /** `POST /api/brands/resolve/bulk` (at most 25 domains); unknown domains map to `null`. */
    resolveBrands: (domains: string[]) =>
      unwrap<{ results: Record<string, ResolvedBrand | null> }>(
        raw.POST('/api/brands/resolve/bulk', { body: { domains } }),
      ),
    /** `GET /api/brands/find`: brands by name (flat results, see overrides). */
    findBrands: (q: string, query: { limit?: number } = {}) =>
      request<FindBrandsResponse>('GET', '/api/brands/find', { query: { q, limit: query.limit } }),
    /** `GET /api/brands/brand-json`. */
    getBrandJson: (domain: string) =>
      unwrap<OperationResponse<'getBrandJson'>>(
        raw.GET('/api/brands/brand-json', { params: { query: { domain } } }),
      ),
    /**
     * `POST /api/brands/setup-my-brand` (auth): a registry-hosted brand.json for a domain your organization owns;
     * answers the hosted URL and the pointer to serve as the domain's `/.well-known/brand.json`.
     */
    setupMyBrand: (input: OperationBody<'setupMyBrand'>) =>
      unwrap<OperationResponse<'setupMyBrand'>>(raw.POST('/api/brands/setup-my-brand', { body: input })),
    /** `GET /api/brands/registry`. */
    listBrands: (query: OperationQuery<'listBrands'> = {}) =>
      unwrap<OperationResponse<'listBrands'>>(raw.GET('/api/brands/registry', { params: { query } })),

    // Property resolution
    /** `GET /api/properties/resolve`: a publisher domain's properties and authorized agents. */
    resolveProperty: (domain: string) =>
      unwrap<ResolvedProperty>(raw.GET('/api/properties/resolve', { params: { query: { domain } } })),
    /** `POST /api/properties/resolve/bulk` (at most 100 domains); unknown domains map to `null`. */
    resolveProperties: (domains: string[]) =>
      unwrap<{ results: Record<string, ResolvedProperty | null> }>(
        raw.POST('/api/properties/resolve/bulk', { body: { domains } }),
      ),
    /** `GET /api/properties/registry`. */
    listProperties: (query: OperationQuery<'listProperties'> = {}) =>
      unwrap<OperationResponse<'listProperties'>>(raw.GET('/api/properties/registry', { params: { query } })),
    /** `GET /api/properties/validate`: fetch and validate a domain's adagents.json. */
    validateProperty: (domain: string) =>
      unwrap<OperationResponse<'validateProperty'>>(
        raw.GET('/api/properties/validate', { params: { query: { domain } } }),
      ),

    /**
     * `POST /api/properties/hosted/{domain}/claim` (auth): a claim-specific `authoritative_location` to place at the
     * domain's `/.well-known/adagents.json`; verify-origin then binds the domain to your organization.
     */
    claimHostedPropertyDomain: (domain: string) =>
      unwrap<OperationResponse<'claimHostedPropertyDomain'>>(
        raw.POST('/api/properties/hosted/{domain}/claim', { params: { path: { domain } } }),
      ),
    /**
     * `POST /api/properties/hosted/{domain}/verify-origin` (auth): the registry reads the origin's pointer;
     * `{ verified, reason, checked_at, detail?, bound_org_id? }`.
     */
    verifyHostedPropertyOrigin: (domain: string) =>
      unwrap<OperationResponse<'verifyHostedPropertyOrigin'>>(
        raw.POST('/api/properties/hosted/{domain}/verify-origin', { params: { path: { domain } } }),
      ),

    // Authorization lookups
    /** `GET /api/registry/validate/property-authorization`: may this agent sell this property identifier? */
    checkPropertyAuthorization: (query: OperationQuery<'validatePropertyAuthorization'>) =>
      unwrap<OperationResponse<'validatePropertyAuthorization'>>(
        raw.GET('/api/registry/validate/property-authorization', { params: { query } }),
      ),
    /** `POST /api/registry/validate/product-authorization`: is the agent authorized for these selectors? */
    checkProductAuthorization: (body: ProductSelectorRequest) =>
      request<ProductAuthorizationResponse>('POST', '/api/registry/validate/product-authorization', { body }),
    /** `GET /api/registry/publisher/authorization`: one agent's authorization rollup at one publisher. */
    lookupPublisherAuthorization: (query: OperationQuery<'lookupPublisherAgentAuthorization'>) =>
      unwrap<OperationResponse<'lookupPublisherAgentAuthorization'>>(
        raw.GET('/api/registry/publisher/authorization', { params: { query } }),
      ),
    /**
     * `GET /api/registry/publisher` (public): a publisher's properties, agents, hosting mode and files;
     * `include: 'placements'` adds its placements.
     */
    lookupPublisher: (domain: string, query: { include?: 'placements' } = {}) =>
      unwrap<OperationResponse<'lookupPublisher'>>(
        raw.GET('/api/registry/publisher', { params: { query: { domain, ...query } } }),
      ),
    /** `GET /api/registry/lookup/domain/{domain}` (deprecated upstream). */
    lookupDomain: (domain: string) =>
      unwrap<OperationResponse<'lookupDomain'>>(
        raw.GET('/api/registry/lookup/domain/{domain}', { params: { path: { domain } } }),
      ),
    /** `GET /api/registry/lookup/property`: agents authorized for a property identifier. */
    lookupProperty: (query: OperationQuery<'lookupProperty'>) =>
      unwrap<OperationResponse<'lookupProperty'>>(
        raw.GET('/api/registry/lookup/property', { params: { query } }),
      ),
    /** `GET /api/registry/lookup/agent/{agentUrl}/domains`: the publisher domains that authorize an agent. */
    getAgentDomains: (agentUrl: string) =>
      unwrap<OperationResponse<'getAgentDomains'>>(
        raw.GET('/api/registry/lookup/agent/{agentUrl}/domains', { params: { path: { agentUrl } } }),
      ),
    /** `POST /api/registry/expand/product-identifiers`: selectors to concrete identifiers (AdCP selector shape). */
    expandProductIdentifiers: (body: ProductSelectorRequest) =>
      request<ExpandProductIdentifiersResponse>('POST', '/api/registry/expand/product-identifiers', { body }),

    // Validation tools
    /** `POST /api/adagents/validate`: fetch and validate a domain's `/.well-known/adagents.json`. */
    validateAdagents: (domain: string) =>
      unwrap<OperationResponse<'validateAdagents'>>(raw.POST('/api/adagents/validate', { body: { domain } })),
    /** `POST /api/adagents/create`: generate a valid adagents.json. */
    createAdagents: (body: { authorized_agents: AdagentsAuthorizedAgent[] } & Record<string, unknown>) =>
      unwrap<OperationResponse<'createAdagents'>>(raw.POST('/api/adagents/create', { body: body as never })),

    // Agent discovery
    /** `GET /api/registry/agents`. */
    listAgents: (query: OperationQuery<'listAgents'> = {}) =>
      unwrap<OperationResponse<'listAgents'>>(raw.GET('/api/registry/agents', { params: { query } })),
    /** `GET /api/registry/publishers`. */
    listPublishers: () => unwrap<OperationResponse<'listPublishers'>>(raw.GET('/api/registry/publishers')),
    /** `GET /api/registry/stats`. */
    getStats: () => unwrap<OperationResponse<'getRegistryStats'>>(raw.GET('/api/registry/stats')),
    /** `POST /api/registry/crawl-request` (auth): ask for a publisher domain to be crawled again. */
    requestCrawl: (domain: string) =>
      unwrap<OperationResponse<'requestCrawl', 202>>(
        raw.POST('/api/registry/crawl-request', { body: { domain } }),
      ),
    /** `GET /api/registry/crawl-request/{crawlRequestId}` (auth). */
    getCrawlRequest: (crawlRequestId: string) =>
      unwrap<OperationResponse<'getCrawlRequest'>>(
        raw.GET('/api/registry/crawl-request/{crawlRequestId}', { params: { path: { crawlRequestId } } }),
      ),

    // Search, Brand Discovery and Agent Discovery (inventory profiles, manager re-validation)
    /** `GET /api`: the registry's entry points and documentation links. */
    apiDiscovery: () => unwrap<OperationResponse<'apiDiscovery'>>(raw.GET('/api')),
    /**
     * `GET /api/search`: brands, publishers and properties (up to 5 each by default) matching every word of `q`
     * as a prefix, best first. adwire's registry also answers `agents` and `has_more`, and pages one category
     * with `types`, `limit` and `offset`.
     */
    search: (q: string, query: { types?: string; limit?: number; offset?: number } = {}) =>
      request<SearchResults>('GET', '/api/search', { query: { q, ...query } }),
    /** `GET /api/manifest-refs/lookup`: the best brand.json (or adagents.json) reference of a domain. */
    lookupManifestRef: (domain: string, query: { type?: string } = {}) =>
      unwrap<OperationResponse<'lookupManifestRef'>>(
        raw.GET('/api/manifest-refs/lookup', { params: { query: { domain, ...query } } }),
      ),
    /** `POST /api/registry/brand-crawl-request` (auth): re-crawl a domain's brand.json in the background. */
    requestBrandCrawl: (domain: string) =>
      unwrap<OperationResponse<'requestBrandCrawl', 202>>(
        raw.POST('/api/registry/brand-crawl-request', { body: { domain } }),
      ),
    /** `POST /api/registry/brand/{domain}/force-crawl` (administrators): crawl brand.json now. */
    forceBrandCrawl: (domain: string) =>
      unwrap<OperationResponse<'forceBrandCrawl'>>(
        raw.POST('/api/registry/brand/{domain}/force-crawl', { params: { path: { domain } } }),
      ),
    /** `GET /api/registry/agents/search` (auth): agents by inventory profile; follow `cursor` while `has_more`. */
    searchAgentProfiles: (query: OperationQuery<'searchAgentProfiles'> = {}) =>
      unwrap<OperationResponse<'searchAgentProfiles'>>(
        raw.GET('/api/registry/agents/search', { params: { query } }),
      ),
    /** `POST /api/registry/manager-revalidation-request` (auth): re-validate a manager's delegating publishers. */
    requestManagerRevalidation: (managerDomain: string) =>
      unwrap<OperationResponse<'requestManagerRevalidation', 202>>(
        raw.POST('/api/registry/manager-revalidation-request', { body: { manager_domain: managerDomain } }),
      ),

    // Change feed (auth)
    /** `GET /api/registry/feed`: one page of events strictly after `cursor`. 410 → {@link CursorExpiredError}. */
    getFeed,
    /** `GET /api/registry/feed/stream`: the SSE stream of feed pages and heartbeats. */
    streamFeed,
  }
}

function asCursorExpired(error: unknown, cursor: string | null): unknown {
  if (RegistryError.is(error) && error.statusCode === 410 && !CursorExpiredError.is(error)) {
    return new CursorExpiredError(cursor, {
      message:
        `${error.message} — the feed cursor ${cursor ?? '(none)'} is unknown or past the retention window; ` +
        're-bootstrap your mirror and resume without a cursor',
      url: error.url,
      statusCode: 410,
      ...(error.responseBody !== undefined ? { responseBody: error.responseBody } : {}),
      data: error.data,
    })
  }
  return error
}
