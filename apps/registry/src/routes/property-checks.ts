/**
 * The list checks of Property Resolution: a buyer's domain list sorted into remove / modify / assess / ok,
 * and raw identifiers classified against the registry's properties.
 */
import type { RegistryRepository } from '../db/repository.js'
import { normalizeDomain } from '../domain/names.js'
import type { PropertyRecord } from '../domain/types.js'

/** Ad-serving and measurement infrastructure: never a property to buy. */
const AD_INFRA = new Set([
  'doubleclick.net',
  'googlesyndication.com',
  'googleadservices.com',
  'google-analytics.com',
  'googletagmanager.com',
  'adnxs.com',
  'rubiconproject.com',
  'pubmatic.com',
  'openx.net',
  'criteo.com',
  'amazon-adsystem.com',
  'taboola.com',
  'outbrain.com',
  'scorecardresearch.com',
  'moatads.com',
  'adsrvr.org',
  'casalemedia.com',
  'indexexchange.com',
])

const isAdInfra = (domain: string) =>
  [...AD_INFRA].some((infra) => domain === infra || domain.endsWith(`.${infra}`))

export async function checkDomains(repository: RegistryRepository, inputs: readonly string[]) {
  const remove: Array<Record<string, string>> = []
  const modify: Array<Record<string, string>> = []
  const assess: Array<{ domain: string }> = []
  const ok: Array<{ domain: string; source: string }> = []
  const seen = new Set<string>()
  const candidates: string[] = []
  for (const input of inputs) {
    const stripped =
      typeof input === 'string'
        ? input
            .trim()
            .toLowerCase()
            .replace(/^https?:\/\//, '')
            .replace(/\/.*$/, '')
        : ''
    const canonical = normalizeDomain(stripped)?.replace(/^www\./, '')
    if (!canonical) {
      remove.push({
        input: String(input),
        canonical: String(input),
        reason: 'blocked',
        blocked_reason: 'not a domain name',
      })
      continue
    }
    if (seen.has(canonical)) {
      remove.push({ input, canonical, reason: 'duplicate' })
      continue
    }
    seen.add(canonical)
    if (isAdInfra(canonical)) {
      remove.push({
        input,
        canonical,
        reason: 'blocked',
        domain_type: 'ad_infra',
        blocked_reason: 'ad serving or measurement infrastructure',
      })
      continue
    }
    if (canonical !== input) modify.push({ input, canonical, reason: 'normalized' })
    candidates.push(canonical)
  }
  const known = new Map(
    (await repository.publishers.getPublishers(candidates)).map((publisher) => [publisher.domain, publisher]),
  )
  for (const domain of candidates) {
    const publisher = known.get(domain)
    if (publisher && (publisher.valid === true || publisher.source !== 'adagents_json'))
      ok.push({ domain, source: publisher.source })
    else assess.push({ domain })
  }
  return {
    summary: {
      total: inputs.length,
      remove: remove.length,
      modify: modify.length,
      assess: assess.length,
      ok: ok.length,
    },
    remove,
    modify,
    assess,
    ok,
  }
}

/** First labels that mark a dotted name as a reverse-DNS app bundle id (`com.example.app`). */
const REVERSE_DNS_FIRST = new Set([
  'com',
  'org',
  'net',
  'io',
  'co',
  'tv',
  'app',
  'dev',
  'example',
  'me',
  'uk',
  'de',
])

/**
 * The identifier types a string may be, most likely first. A dotted name without a scheme may be a domain or
 * a bundle id (`example.pinecrest.news`): both are candidates, bundle id first when it reads as reverse DNS.
 */
function identifierCandidates(input: string): Array<{ type: string; value: string }> {
  const value = input.trim()
  if (value === '') return []
  if (/^\d{6,12}$/.test(value)) return [{ type: 'apple_app_store_id', value }]
  const domain = normalizeDomain(value)
  if (domain && /^https?:\/\//i.test(value)) return [{ type: 'domain', value: domain }]
  const bundle = /^[a-z][a-z0-9_]*(\.[a-z0-9_-]+)+$/i.test(value) ? { type: 'bundle_id', value } : undefined
  if (!domain) return bundle ? [bundle] : []
  if (!bundle) return [{ type: 'domain', value: domain }]
  const labels = value.split('.')
  return labels.length >= 3 && REVERSE_DNS_FIRST.has(labels[0]!.toLowerCase())
    ? [bundle, { type: 'domain', value: domain }]
    : [{ type: 'domain', value: domain }, bundle]
}

/**
 * The identifier a string is: of its candidates, the first the catalog knows a property for, else the most
 * likely one.
 */
async function classifyIdentifier(
  repository: RegistryRepository,
  input: string,
): Promise<{ identifier: { type: string; value: string }; properties: PropertyRecord[] } | undefined> {
  const candidates = identifierCandidates(input)
  for (const candidate of candidates) {
    const properties = await repository.authorizations.propertiesWithIdentifier(
      candidate.type,
      candidate.value,
    )
    if (properties.length > 0) return { identifier: candidate, properties }
  }
  return candidates[0] && { identifier: candidates[0], properties: [] }
}

export async function checkIdentifiers(repository: RegistryRepository, inputs: readonly string[]) {
  const summary = { total: inputs.length, ready: 0, known: 0, ad_infra: 0, unknown: 0, skipped: 0 }
  const now = new Date().toISOString()
  const entries = []
  for (const input of inputs) {
    const classified = await classifyIdentifier(repository, String(input))
    if (!classified) {
      summary.skipped += 1
      entries.push({
        input: String(input),
        identifier: { type: 'unknown', value: String(input) },
        verdict: 'skipped',
        classification: null,
        source: null,
        property_rid: null,
        action: 'fix_or_remove',
      })
      continue
    }
    const { identifier, properties } = classified
    if (identifier.type === 'domain' && isAdInfra(identifier.value)) {
      summary.ad_infra += 1
      entries.push({
        input,
        identifier,
        verdict: 'ad_infra',
        classification: 'ad_infra',
        source: null,
        property_rid: null,
        action: 'remove',
      })
      continue
    }
    const property = properties[0]
    if (!property) {
      summary.unknown += 1
      entries.push({
        input,
        identifier,
        verdict: 'unknown',
        classification: null,
        source: null,
        property_rid: null,
        action: 'assess',
      })
      continue
    }
    const agents = await repository.authorizations.agentsForIdentifier(identifier.type, identifier.value, now)
    const verdict = agents.length > 0 ? 'ready' : 'known'
    summary[verdict] += 1
    entries.push({
      input,
      identifier,
      verdict,
      classification: property.property_type,
      source: property.source,
      property_rid: property.rid,
      action: verdict === 'ready' ? 'keep' : 'assess',
    })
  }
  return { summary, entries }
}
