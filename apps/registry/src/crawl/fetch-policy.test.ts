/**
 * Every vector of conformance `adagents-discovery-redirects.json`, graded on `result` (and `final_url`).
 *
 * The vectors name real public hosts (ladepeche.fr, victim.github.io) over https, which a test cannot serve, so
 * the network is the vector itself: a fetch answering each URL of the chain with the vector's redirect and the
 * final URL with a 200. The policy code under test is the one the crawler runs; the crawler's own fetches are
 * exercised against real servers in api.test.ts.
 */
import { readConformanceJson } from '@adwire/conformance'
import type { FetchedResource, SafeFetch } from '@adwire/http-signatures'
import { describe, expect, it } from 'vitest'
import { CrawlFetchError, fetchWithPolicy } from './fetch-policy.js'

interface Vector {
  id: string
  target: 'well_known' | 'authoritative_location'
  origin_url: string
  redirect_chain: Array<{ status: number; location: string }>
  expected: { result: 'resolved' | 'refused'; final_url?: string; reason?: string }
}

const vectors = (
  readConformanceJson('test-vectors', 'adagents-discovery-redirects.json') as { vectors: Vector[] }
).vectors

function scriptedNetwork(vector: Vector): { fetch: SafeFetch; dialed: string[] } {
  const dialed: string[] = []
  const fetch: SafeFetch = async (url) => {
    dialed.push(url)
    const index =
      url === vector.origin_url ? 0 : vector.redirect_chain.findIndex((hop) => hop.location === url) + 1
    const hop = vector.redirect_chain[index]
    const response: FetchedResource = hop
      ? { url, status: hop.status, headers: new Headers({ location: hop.location }), body: new Uint8Array() }
      : {
          url,
          status: 200,
          headers: new Headers({ 'content-type': 'application/json' }),
          body: new TextEncoder().encode('{}'),
        }
    return response
  }
  return { fetch, dialed }
}

describe('adagents discovery redirect vectors', () => {
  it('has vectors to run', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(12)
  })

  for (const vector of vectors) {
    it(vector.id, async () => {
      const { fetch, dialed } = scriptedNetwork(vector)
      const outcome = fetchWithPolicy(fetch, vector.origin_url, vector.target, 1 << 20)
      if (vector.expected.result === 'resolved') {
        const { finalUrl, response } = await outcome
        expect(response.status).toBe(200)
        expect(finalUrl).toBe(vector.expected.final_url)
      } else {
        const error = await outcome.then(
          () => undefined,
          (caught: unknown) => caught,
        )
        expect(error).toBeInstanceOf(CrawlFetchError)
        expect((error as CrawlFetchError).reason).toBe(vector.expected.reason)
        // A refused hop is never dialed: only the hops before it were fetched.
        const refusedAt = (error as CrawlFetchError).url
        expect(dialed.at(-1)).toBe(refusedAt)
      }
    })
  }
})
