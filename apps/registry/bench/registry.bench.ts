/**
 * `pnpm bench`: the registry's read paths with 110,000 properties loaded (100 publishers × 1,000 properties and
 * one of 10,000, three agents each), on SQLite and on PostgreSQL (when ADWIRE_TEST_POSTGRES_URL answers), over
 * HTTP with 16 requests in flight, each reported beside a primitive measured in the same run (architecture.md:
 * benches report ratios against primitives, never absolute targets):
 *
 * - resolve: `GET /api/properties/resolve` of a publisher with 1,000 properties,
 *   against the bare `SELECT` of its property rows + `JSON.stringify` of them
 * - authorization check: `GET /api/registry/validate/property-authorization` of a random identifier,
 *   against a bare point query on the identifier index
 * - expand: `POST /api/registry/expand/product-identifiers` on the 10,000-property publisher (`selection_type:
 *   all`), against the bare `SELECT` of the same 10,000 rows + `JSON.stringify` of them
 *
 * The primitives run through the same driver (the registry's own pool or SQLite handle) and are served by a bare
 * `node:http` server in this process, fetched by the same client, so both sides pay the same HTTP transport and
 * the ratio (service ops/s ÷ primitive ops/s; 1.00 = no overhead beyond the primitive) is what the service adds:
 * routing, request validation, row mapping, the response shape. Rounds alternate primitive and service and the
 * median ratio is reported, because the development machines are shared. Then:
 *
 * - feed append: 16 concurrent `saveSnapshot` calls on small publishers (20 properties), each renaming one property,
 *   so every call writes facts and change-feed events in one transaction (the feed append path, serialised by a lock)
 *
 * Each round runs for BENCH_SECONDS (default 1; ROUNDS rounds per side). Prints ops/s, mean latency (which, with
 * 16 in flight on one thread, is about 16 × the per-call cost), response size and ratios; asserts nothing.
 */
import type { Server } from 'node:http'
import type { RunningRegistry } from '../src/service.js'
import type { PublisherSnapshot } from '../src/domain/types.js'
import type { SqlDriver } from '@adwire/sql'
import { PROPERTY_COLUMNS } from '../src/db/rows.js'
import {
  IN_FLIGHT,
  jsonServer,
  median,
  onEachStore,
  rate,
  ROUNDS,
  SECONDS,
  startBenchRegistry,
  type Rate,
} from './support.js'

const PUBLISHERS = 100
const PER_PUBLISHER = 1000
const AGENTS = ['https://sales.one.bench/mcp', 'https://sales.two.bench/mcp', 'https://sales.three.bench/mcp']

function snapshot(domain: string, count: number): PublisherSnapshot {
  const url = `https://${domain}/.well-known/adagents.json`
  const properties = Array.from({ length: count }, (_, index) => ({
    publisher_domain: domain,
    property_id: `p${index}`,
    property_type: index % 10 === 0 ? 'mobile_app' : 'website',
    name: `Property ${index}`,
    identifiers: [{ type: 'domain', value: `s${index}.${domain}` }],
    tags: [index % 2 === 0 ? 'even' : 'odd'],
    source: 'adagents_json' as const,
  }))
  const grant = (agent: string, id: string | null) => ({
    agent_url: agent,
    publisher_domain: domain,
    property_id: id,
    authorized_for: 'bench',
    authorization_type: 'property_ids',
    evidence: 'adagents_json' as const,
    signing_keys: null,
    effective_from: null,
    effective_until: null,
    source_url: url,
  })
  return {
    publisher: { domain, source: 'adagents_json', valid: true, url, discovery_method: 'direct' },
    properties,
    authorizations: [
      grant(AGENTS[0]!, null),
      ...properties
        .filter((_, index) => index % 2 === 0)
        .map((property) => grant(AGENTS[1]!, property.property_id)),
      grant(AGENTS[2]!, 'p1'),
    ],
  }
}

async function load(registry: RunningRegistry): Promise<number> {
  const started = performance.now()
  for (let index = 0; index < PUBLISHERS; index += 1) {
    await registry.repository.publishers.saveSnapshot(
      snapshot(`pub${index}.bench`, PER_PUBLISHER),
      'bench',
      Date.now(),
    )
  }
  await registry.repository.publishers.saveSnapshot(snapshot('big.bench', 10_000), 'bench', Date.now())
  return (performance.now() - started) / 1000
}

const row = (name: string, result: Rate): string =>
  `  ${name.padEnd(20)} ${result.opsPerSecond.toFixed(0).padStart(7)} ops/s  mean ${result.meanMs.toFixed(1).padStart(7)} ms  ${(result.bytes / 1024).toFixed(0).padStart(5)} KiB/response${result.failed ? `  (${result.failed} failed)` : ''}`

/**
 * Alternating rounds of the primitive and the service; prints the median of each side's rounds and the median
 * of the per-round ratios (service ÷ primitive).
 */
async function compare(
  name: string,
  primitiveName: string,
  primitive: () => Promise<Response>,
  service: () => Promise<Response>,
): Promise<void> {
  const primitives: Rate[] = []
  const services: Rate[] = []
  const ratios: number[] = []
  for (let round = 0; round < ROUNDS; round += 1) {
    primitives.push(await rate(primitive))
    services.push(await rate(service))
    ratios.push(services[round]!.opsPerSecond / Math.max(1e-9, primitives[round]!.opsPerSecond))
  }
  const pick = (rates: Rate[]): Rate => {
    const ops = median(rates.map((item) => item.opsPerSecond))
    return rates.find((item) => item.opsPerSecond === ops)!
  }
  console.log(`${name}: ratio ${median(ratios).toFixed(2)} (service ÷ primitive, median of ${ROUNDS})`)
  console.log(row('service', pick(services)))
  console.log(row(primitiveName, pick(primitives)))
}

/**
 * The primitives, served by a bare node:http server over the registry's own driver: `/rows?domain=` answers
 * the bare SELECT of a publisher's property rows as JSON.stringify of the rows, `/identifier?type=&value=` a
 * point query on the identifier index.
 */
function primitiveServer(driver: SqlDriver): Promise<{ url: string; server: Server }> {
  return jsonServer(async (url) => {
    if (url.pathname === '/rows')
      return driver.all(`SELECT ${PROPERTY_COLUMNS} FROM registry_properties WHERE publisher_domain = ?`, [
        url.searchParams.get('domain'),
      ])
    const hit = await driver.one(
      'SELECT publisher_domain, property_id FROM registry_property_identifiers WHERE identifier_type = ? AND identifier_value = ? LIMIT 1',
      [url.searchParams.get('type'), url.searchParams.get('value')],
    )
    return { authorized: hit !== undefined }
  })
}

/** Concurrent small crawls: each writer re-saves its own publisher with one property renamed per call. */
async function measureAppends(registry: RunningRegistry): Promise<string> {
  let calls = 0
  let events = 0
  let latency = 0
  const seconds = ROUNDS * SECONDS
  const until = performance.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async (_, writer) => {
      const base = snapshot(`append${writer}.bench`, 20)
      for (let round = 0; performance.now() < until; round += 1) {
        const properties = base.properties.map((property, index) =>
          index === round % 20 ? { ...property, name: `Renamed ${round}` } : property,
        )
        const started = performance.now()
        const stored = await registry.repository.publishers.saveSnapshot(
          { ...base, properties },
          'bench',
          Date.now(),
        )
        events += stored.length
        latency += performance.now() - started
        calls += 1
      }
    }),
  )
  return `${'feed append (16 conc.)'.padEnd(22)} ${(calls / seconds).toFixed(0).padStart(7)} ops/s  mean ${(latency / Math.max(1, calls)).toFixed(1).padStart(6)} ms  (${(events / seconds).toFixed(0)} events/s)`
}

async function run(label: string, env: Record<string, string>): Promise<void> {
  const registry = await startBenchRegistry(env)
  let primitives: { url: string; server: Server } | undefined
  try {
    primitives = await primitiveServer(registry.repository.driver)
    const bare = primitives.url
    const seconds = await load(registry)
    console.log(
      `\n${label}: loaded ${PUBLISHERS * PER_PUBLISHER + 10_000} properties in ${seconds.toFixed(1)} s; ${IN_FLIGHT} requests in flight`,
    )
    const random = (n: number) => Math.floor(Math.random() * n)
    await compare(
      'resolve (1,000 props)',
      'bare SELECT+stringify',
      () => fetch(`${bare}/rows?domain=pub${random(PUBLISHERS)}.bench`),
      () => fetch(`${registry.url}/api/properties/resolve?domain=pub${random(PUBLISHERS)}.bench`),
    )
    const identifier = () => `s${random(PER_PUBLISHER)}.pub${random(PUBLISHERS)}.bench`
    await compare(
      'authorization check',
      'bare point query',
      () => fetch(`${bare}/identifier?type=domain&value=${identifier()}`),
      () => {
        const agent = encodeURIComponent(AGENTS[random(3)]!)
        return fetch(
          `${registry.url}/api/registry/validate/property-authorization?agent_url=${agent}&identifier_type=domain&identifier_value=${identifier()}`,
        )
      },
    )
    const body = JSON.stringify({
      agent_url: AGENTS[0],
      publisher_properties: [{ publisher_domain: 'big.bench', selection_type: 'all' }],
    })
    await compare(
      'expand (10,000 props)',
      'bare SELECT+stringify',
      () => fetch(`${bare}/rows?domain=big.bench`),
      () =>
        fetch(`${registry.url}/api/registry/expand/product-identifiers`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        }),
    )
    console.log(await measureAppends(registry))
  } finally {
    const server = primitives?.server
    if (server) await new Promise((resolve) => server.close(resolve))
    await registry.close()
  }
}

await onEachStore('registry-bench', { sqlite: 'SQLite', postgres: 'PostgreSQL' }, run)
