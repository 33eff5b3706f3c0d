/**
 * Test helpers: small real publisher/brand sites on 127.0.0.1 (each a node http server serving mutable
 * `/.well-known/*` files), a registry started on port 0 against SQLite or a fresh PostgreSQL schema, and an
 * API helper that checks every JSON response against the served OpenAPI document.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import {
  createRegistryClient,
  readSse as readSseStream,
  RegistryError,
  type RegistryClient,
} from '@adwire/registry-client'
import { resolveTestPostgresUrl } from '@adwire/vitest-config/postgres'
import { parseEnv } from '../env.js'
import { startRegistry, type RunningRegistry, type StartOverrides } from '../service.js'
import { checkResponse } from '../spec/validators.js'
import { checkUpstreamResponse, contractFetch } from './contract.js'

export interface Site {
  readonly origin: string
  /** Path → [status, body, headers]; change it to change what the site serves. */
  readonly files: Map<string, { status: number; body: string; headers?: Record<string, string> }>
  serveJson(path: string, value: unknown, status?: number): void
  close(): Promise<void>
}

/** A site on 127.0.0.1 (port 0). */
export async function startSite(): Promise<Site> {
  const files = new Map<string, { status: number; body: string; headers?: Record<string, string> }>()
  const server: Server = createServer((request, response) => {
    const file = files.get((request.url ?? '/').split('?')[0]!)
    if (!file) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
      return
    }
    response.writeHead(file.status, { 'content-type': 'application/json', ...file.headers }).end(file.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    files,
    serveJson(path, value, status = 200) {
      files.set(path, { status, body: typeof value === 'string' ? value : JSON.stringify(value) })
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export type Backend = { kind: 'sqlite' } | { kind: 'postgres'; url: string }

export interface TestRegistry {
  readonly registry: RunningRegistry
  /** Removes the SQLite folder or drops the PostgreSQL schema. */
  cleanup(): Promise<void>
}

/** Starts a registry on `backend` with the crawler allowed onto loopback and `origins` mapped. */
export async function startTestRegistry(
  backend: Backend,
  options: {
    origins?: Record<string, string>
    seed?: boolean
    now?: () => number
    /** More environment variables (e.g. `FEED_RETENTION_DAYS`). */
    env?: Record<string, string>
    /** Tuning of the compliance runs (step timeout, concurrency…), as `startRegistry` takes it. */
    complianceRuns?: StartOverrides['complianceRuns']
  } = {},
): Promise<TestRegistry> {
  const origins = Object.entries(options.origins ?? {})
    .map(([domain, origin]) => `${domain}=${origin}`)
    .join(',')
  const common = {
    PORT: '0',
    SEED: options.seed === false ? '0' : '1',
    ALLOW_PRIVATE_CRAWL: '1',
    CRAWL_ORIGINS: origins,
    CRAWL_TIMEOUT_MS: '3000',
    // Rate limits off unless a test turns one on (tests call faster than any client should).
    RATE_LIMIT_READ_PER_MINUTE: '0',
    RATE_LIMIT_WRITE_PER_MINUTE: '0',
    RATE_LIMIT_CRAWL_PER_MINUTE: '0',
    ...options.env,
  }
  if (backend.kind === 'sqlite') {
    const folder = mkdtempSync(join(tmpdir(), 'adwire-registry-'))
    const registry = await startRegistry(
      parseEnv({ ...common, DATABASE_URL: `sqlite:${join(folder, 'registry.sqlite')}` }),
      {
        validateResponses: 'strict',
        log: (entry) => {
          if (entry.error || entry.response_invalid) console.error(entry)
        },
        ...(options.now ? { now: options.now } : {}),
        ...(options.complianceRuns ? { complianceRuns: options.complianceRuns } : {}),
      },
    )
    return { registry, cleanup: async () => rmSync(folder, { recursive: true, force: true }) }
  }
  const schema = `registry_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  const registry = await startRegistry(
    parseEnv({ ...common, DATABASE_URL: backend.url, DATABASE_SCHEMA: schema }),
    {
      validateResponses: 'strict',
      log: () => {},
      ...(options.now ? { now: options.now } : {}),
      ...(options.complianceRuns ? { complianceRuns: options.complianceRuns } : {}),
    },
  )
  return { registry, cleanup: () => dropSchema(backend.url, schema) }
}

/** Drops a PostgreSQL schema (the end of a test run). */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await client.end()
  }
}

/** Every (operationId, status) an API call of the tests saw, for the contract summary. */
export const seenResponses = new Set<string>()

export interface ApiResult {
  status: number
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any
  headers: Headers
}

/**
 * Calls the registry and checks the JSON response against `operationId`'s response schema in the served
 * document and in the upstream one (throws on a mismatch, so every test doubles as a contract test).
 */
export async function api(
  registry: RunningRegistry,
  operationId: string,
  path: string,
  init: { method?: string; body?: unknown; token?: string; headers?: Record<string, string> } = {},
): Promise<ApiResult> {
  const response = await fetch(`${registry.url}${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...init.headers,
    },
    ...(init.body !== undefined
      ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }
      : {}),
  })
  const text = await response.text()
  const body = text === '' ? undefined : (JSON.parse(text) as unknown)
  const problem =
    checkResponse(operationId, response.status, body) ??
    checkUpstreamResponse(operationId, response.status, body)
  if (problem) throw new Error(`contract: ${problem} — body ${text.slice(0, 300)}`)
  seenResponses.add(`${operationId} ${response.status}`)
  return { status: response.status, body, headers: response.headers }
}

/**
 * Reads SSE events from a stream until `count` events arrived (or `timeoutMs`); the parser is `readSse` of
 * @adwire/registry-client.
 */
export async function readSse(
  url: string,
  token: string,
  count: number,
  timeoutMs = 5000,
): Promise<Array<{ event: string; id?: string; data: unknown }>> {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), timeoutMs)
  const events: Array<{ event: string; id?: string; data: unknown }> = []
  try {
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${token}` },
      signal: controller.signal,
    })
    if (!response.ok || !response.body) throw new Error(`stream answered ${response.status}`)
    for await (const message of readSseStream(response.body)) {
      if (message.event === 'message') continue
      events.push({
        event: message.event,
        ...(message.id ? { id: message.id } : {}),
        data: JSON.parse(message.data) as unknown,
      })
      if (events.length >= count) return events
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error
  } finally {
    clearTimeout(timer)
    controller.abort()
  }
  return events
}

/**
 * A `@adwire/registry-client` on `registry` (with `apiKey` when given) whose every answer is checked against the
 * served and the upstream document.
 */
export function clientOf(registry: RunningRegistry, apiKey?: string): RegistryClient {
  return createRegistryClient({
    baseUrl: registry.url,
    ...(apiKey ? { apiKey } : {}),
    fetch: contractFetch(checkResponse),
  })
}

/** The backends a suite runs on: SQLite always, PostgreSQL when the tests have a database (else undefined). */
export async function testBackends(): Promise<Array<[string, Backend | undefined]>> {
  const postgresUrl = await resolveTestPostgresUrl()
  return [
    ['sqlite', { kind: 'sqlite' }],
    ['postgres', postgresUrl ? { kind: 'postgres', url: postgresUrl } : undefined],
  ]
}

/** The RegistryError a call rejects with (fails the test when it resolves). */
export async function refusal(promise: Promise<unknown>): Promise<RegistryError> {
  try {
    await promise
  } catch (error) {
    if (RegistryError.is(error)) return error
    throw error
  }
  throw new Error('expected the registry to refuse')
}

/** A brand.json a test site serves for `crawled-brand.test` (one master brand, "Crawled"). */
export const CRAWLED_BRAND_JSON = {
  house: { domain: 'crawled-brand.test', name: 'Crawled House' },
  brands: [
    {
      id: 'crawled',
      names: [{ en: 'Crawled' }],
      keller_type: 'master',
      url: 'https://crawled-brand.test',
    },
  ],
}
