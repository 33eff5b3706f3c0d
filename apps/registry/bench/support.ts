/**
 * What the registry benches share: the service started without rate limits, the SQLite then PostgreSQL
 * runs (a temporary file, a schema dropped afterwards), a closed-loop rate of one request, the median, and a
 * bare node:http server answering JSON for the primitives.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseEnv } from '../src/env.js'
import { startRegistry, type RunningRegistry } from '../src/service.js'
import { dropSchema } from '../src/testing/registry.js'

export const SECONDS = Number(process.env.BENCH_SECONDS ?? 1)
export const ROUNDS = 3
export const IN_FLIGHT = 16

/** The service on `env`, without per-client rate limits (the benches measure the service, not its limits). */
export function startBenchRegistry(env: Record<string, string>): Promise<RunningRegistry> {
  return startRegistry(
    parseEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      SEED: '0',
      RATE_LIMIT_READ_PER_MINUTE: '0',
      RATE_LIMIT_WRITE_PER_MINUTE: '0',
      RATE_LIMIT_CRAWL_PER_MINUTE: '0',
      ...env,
    }),
    { validateResponses: 'off', log: () => {} },
  )
}

/**
 * Runs `run` on a SQLite file in a temporary folder, then on a fresh PostgreSQL schema when
 * ADWIRE_TEST_POSTGRES_URL is set (dropped afterwards), each with its label.
 */
export async function onEachStore(
  name: string,
  labels: { readonly sqlite: string; readonly postgres: string },
  run: (label: string, env: Record<string, string>) => Promise<void>,
): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), `adwire-${name}-`))
  try {
    await run(labels.sqlite, { DATABASE_URL: `sqlite:${join(folder, 'bench.sqlite')}` })
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
  const postgresUrl = process.env.ADWIRE_TEST_POSTGRES_URL
  if (!postgresUrl) {
    console.log('\nPostgreSQL: skipped (set ADWIRE_TEST_POSTGRES_URL)')
    return
  }
  const schema = `${name.replaceAll('-', '_')}_${Date.now()}`
  try {
    await run(labels.postgres, { DATABASE_URL: postgresUrl, DATABASE_SCHEMA: schema })
  } finally {
    await dropSchema(postgresUrl, schema)
  }
}

export interface Rate {
  readonly opsPerSecond: number
  readonly meanMs: number
  readonly failed: number
  /** Size of the last response body. */
  readonly bytes: number
}

/** One round: `request` repeated for SECONDS with IN_FLIGHT in flight, each response body read in full. */
export async function rate(request: () => Promise<Response>): Promise<Rate> {
  let done = 0
  let failed = 0
  let latency = 0
  let bytes = 0
  const began = performance.now()
  const until = began + SECONDS * 1000
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (performance.now() < until) {
        const started = performance.now()
        const response = await request()
        bytes = (await response.arrayBuffer()).byteLength
        latency += performance.now() - started
        if (response.ok) done += 1
        else failed += 1
      }
    }),
  )
  const seconds = (performance.now() - began) / 1000
  return { opsPerSecond: done / seconds, meanMs: latency / Math.max(1, done + failed), failed, bytes }
}

export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

/** A bare node:http server on 127.0.0.1 answering each request with `answer(url)` as JSON (500 on failure). */
export async function jsonServer(
  answer: (url: URL) => Promise<unknown>,
): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    answer(new URL(request.url ?? '/', 'http://bench')).then(
      (body) => {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(JSON.stringify(body))
      },
      (error: unknown) => {
        response.writeHead(500)
        response.end(String(error))
      },
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}
