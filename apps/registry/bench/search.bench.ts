/**
 * `pnpm bench` (second part): cross-entity search over 101,000 indexed entities — 20,000 brands, 800 publishers
 * with 100 properties each (80,000 properties) and 200 agents — on SQLite (FTS5) and on PostgreSQL (tsvector +
 * GIN, when ADWIRE_TEST_POSTGRES_URL answers). Publishers go in through the crawler's write path
 * (`saveSnapshot`), brands through bulk inserts; the index triggers run for every row, so the load time includes
 * keeping the index in step.
 *
 * Three query shapes, drawn at random from the loaded vocabulary:
 * - rare: a whole three-word name (`brawick solgate gazette`: a few entities)
 * - prefix: one three-letter prefix of a word (`sol`: about 1/10 of the entities to rank)
 * - mixed: a word and a prefix of a kind (`brawick gaz`)
 *
 * For each: the latency of `GET /api/search` one request at a time (p50, p95 over SAMPLES requests), then
 * throughput with 16 in flight beside a primitive measured in the same run — the bare unranked index probe of
 * each category (`MATCH` / `@@ … LIMIT 6`, four of them) through the same driver, served by a bare node:http
 * server in this process —
 * and the ratio (service ops/s ÷ primitive ops/s, median of ROUNDS alternating rounds). Last, the latency of
 * the agent inventory-profile search (`GET /api/registry/agents/search`, computed per request). Asserts
 * nothing.
 */
import type { Server } from 'node:http'
import type { RunningRegistry } from '../src/service.js'
import type { PublisherSnapshot } from '../src/domain/types.js'
import { insertMany } from '../src/db/batch.js'
import type { SqlDriver } from '@adwire/sql'
import { searchTerms } from '../src/db/search.js'
import {
  IN_FLIGHT,
  jsonServer,
  median,
  onEachStore,
  rate,
  ROUNDS,
  startBenchRegistry,
  type Rate,
} from './support.js'

const SAMPLES = 200
const BRANDS = 20_000
const PUBLISHERS = 800
const PER_PUBLISHER = 100
const AGENTS = 200

// A deterministic vocabulary: two sets of 80 invented words (syllable pairs) and 10 kinds; a name is one of
// each (64,000 combinations), so a whole name is rare and a three-letter prefix matches ~1/80 of the entities.
const syllables = (first: string[], second: string[]) => first.flatMap((a) => second.map((b) => `${a}${b}`))
const ADJECTIVES = syllables(
  ['bra', 'cor', 'del', 'fen', 'gal', 'hol', 'jun', 'kor', 'lum', 'mar'],
  ['ton', 'ley', 'wick', 'ford', 'mere', 'dale', 'holm', 'stead'],
)
const NOUNS = syllables(
  ['qua', 'ris', 'sol', 'tav', 'ulm', 'ver', 'wyn', 'xan', 'yor', 'zel'],
  ['bird', 'crest', 'field', 'gate', 'haven', 'light', 'port', 'wood'],
)
const KINDS = [
  'outfitters',
  'foods',
  'gazette',
  'radio',
  'studios',
  'motors',
  'labs',
  'news',
  'games',
  'apparel',
]

// A small LCG (high bits: the low ones of a power-of-two modulus cycle quickly) keeps runs comparable.
let seed = 42
const next = (n: number): number => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
  return Math.floor(seed / 65_536) % n
}
const pick = <T>(list: readonly T[]): T => list[next(list.length)]!

function publisherSnapshot(index: number): PublisherSnapshot {
  const domain = `pub${index}.bench`
  const url = `https://${domain}/.well-known/adagents.json`
  const properties = Array.from({ length: PER_PUBLISHER }, (_, n) => ({
    publisher_domain: domain,
    property_id: `p${n}`,
    property_type: n % 10 === 0 ? 'mobile_app' : 'website',
    name: `${pick(ADJECTIVES)} ${pick(NOUNS)} ${pick(KINDS)}`,
    identifiers: [{ type: 'domain', value: `s${n}.${domain}` }],
    tags: [pick(KINDS)],
    source: 'adagents_json' as const,
  }))
  return {
    publisher: { domain, source: 'adagents_json', valid: true, url, discovery_method: 'direct' },
    properties,
    authorizations: [
      {
        agent_url: `https://sales${index % AGENTS}.bench/mcp`,
        publisher_domain: domain,
        property_id: null,
        authorized_for: 'bench',
        authorization_type: 'property_ids',
        evidence: 'adagents_json' as const,
        signing_keys: null,
        effective_from: null,
        effective_until: null,
        source_url: url,
      },
    ],
  }
}

async function load(registry: RunningRegistry): Promise<number> {
  const started = performance.now()
  const at = new Date().toISOString()
  const driver = registry.repository.driver
  const columns = ['domain', 'id', 'brand_name', 'source', 'verified', 'created_at', 'updated_at']
  const rows = Array.from({ length: BRANDS }, (_, index) => [
    `brand${index}.bench`,
    crypto.randomUUID(),
    `${pick(ADJECTIVES)} ${pick(NOUNS)} ${pick(KINDS)}`,
    'community',
    0,
    at,
    at,
  ])
  for (let start = 0; start < rows.length; start += 2000) {
    await driver.transaction((tx) =>
      insertMany(tx, 'registry_brands', columns, rows.slice(start, start + 2000)),
    )
  }
  for (let index = 0; index < PUBLISHERS; index += 1) {
    await registry.repository.publishers.saveSnapshot(publisherSnapshot(index), 'bench', Date.now())
  }
  return (performance.now() - started) / 1000
}

const QUERIES: Record<string, () => string> = {
  rare: () => `${pick(ADJECTIVES)} ${pick(NOUNS)} ${pick(KINDS)}`,
  prefix: () => pick(NOUNS).slice(0, 3),
  mixed: () => `${pick(ADJECTIVES)} ${pick(KINDS).slice(0, 3)}`,
}

const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

/** One request at a time: p50/p95 latency and the mean number of results answered. */
async function latency(
  url: (q: string) => string,
  query: () => string,
  headers: Record<string, string> = {},
  samples = SAMPLES,
): Promise<string> {
  const times: number[] = []
  let results = 0
  for (let index = 0; index < samples; index += 1) {
    const started = performance.now()
    const response = await fetch(url(query()), { headers })
    const body = (await response.json()) as Record<string, unknown[]>
    times.push(performance.now() - started)
    for (const key of ['brands', 'publishers', 'properties', 'agents', 'results'])
      results += body[key]?.length ?? 0
  }
  return `p50 ${percentile(times, 0.5).toFixed(1).padStart(6)} ms  p95 ${percentile(times, 0.95).toFixed(1).padStart(6)} ms  (${(results / samples).toFixed(1)} results/answer)`
}

/** The primitive: the bare unranked index probe of the query's terms, as JSON. */
function primitiveServer(driver: SqlDriver): Promise<{ url: string; server: Server }> {
  return jsonServer((url) => {
    const terms = searchTerms(url.searchParams.get('q') ?? '')
    const types = ['brand', 'publisher', 'property', 'agent']
    return driver.dialect === 'sqlite'
      ? driver.all(
          types
            .map(
              (type) =>
                `SELECT * FROM (SELECT rowid FROM registry_search_fts_${type} WHERE registry_search_fts_${type} MATCH ? LIMIT 6)`,
            )
            .join(' UNION ALL '),
          Array<string>(4).fill(terms.map((term) => `"${term}"*`).join(' ')),
        )
      : driver.all(
          types
            .map(
              (type) =>
                `(SELECT id FROM registry_search_entries WHERE entity_type = '${type}' AND document @@ to_tsquery('simple', ?) LIMIT 6)`,
            )
            .join(' UNION ALL '),
          Array<string>(4).fill(terms.map((term) => `${term}:*`).join(' & ')),
        )
  })
}

async function run(label: string, env: Record<string, string>): Promise<void> {
  const registry = await startBenchRegistry(env)
  let primitives: { url: string; server: Server } | undefined
  try {
    primitives = await primitiveServer(registry.repository.driver)
    const bare = primitives.url
    const seconds = await load(registry)
    const indexed = await registry.repository.driver.one<{ n: number }>(
      'SELECT CAST(COUNT(*) AS INTEGER) AS n FROM registry_search_entries',
    )
    console.log(
      `\n${label}: indexed ${Number(indexed?.n ?? 0)} entities (${BRANDS} brands, ${PUBLISHERS} publishers, ${PUBLISHERS * PER_PUBLISHER} properties, ${AGENTS} agents) in ${seconds.toFixed(1)} s, triggers included`,
    )
    const service = (q: string) => `${registry.url}/api/search?q=${encodeURIComponent(q)}`
    for (const [shape, query] of Object.entries(QUERIES)) {
      console.log(`search ${shape.padEnd(6)} (1 in flight)   ${await latency(service, query)}`)
      const ratios: number[] = []
      const services: Rate[] = []
      const bares: Rate[] = []
      for (let round = 0; round < ROUNDS; round += 1) {
        bares.push(await rate(() => fetch(`${bare}/?q=${encodeURIComponent(query())}`)))
        services.push(await rate(() => fetch(service(query()))))
        ratios.push(services[round]!.opsPerSecond / Math.max(1e-9, bares[round]!.opsPerSecond))
      }
      const ops = (rates: Rate[]) => median(rates.map((item) => item.opsPerSecond))
      const mean = (rates: Rate[]) => median(rates.map((item) => item.meanMs))
      console.log(
        `search ${shape.padEnd(6)} (${IN_FLIGHT} in flight)  ${ops(services).toFixed(0).padStart(6)} ops/s  mean ${mean(services).toFixed(1).padStart(6)} ms;  bare probe ${ops(bares).toFixed(0).padStart(6)} ops/s;  ratio ${median(ratios).toFixed(2)}`,
      )
    }
    // Agent inventory profiles are computed per request from the authorizations in effect (no index).
    const { apiKey } = await registry.createOrg('bench')
    const profiles = await latency(
      (q) => `${registry.url}/api/registry/agents/search?property_types=${q}&limit=50`,
      () => pick(['website', 'mobile_app']),
      { authorization: `Bearer ${apiKey}` },
      20,
    )
    console.log(`agents/search (1 in flight)   ${profiles.replace('results/answer', 'profiles/answer')}`)
  } finally {
    const server = primitives?.server
    if (server) await new Promise((resolve) => server.close(resolve))
    await registry.close()
  }
}

await onEachStore(
  'registry-search-bench',
  { sqlite: 'SQLite (FTS5)', postgres: 'PostgreSQL (tsvector + GIN)' },
  run,
)
