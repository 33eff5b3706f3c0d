/**
 * Property resolution: the stored publisher when it has a valid adagents.json or a community record, else a
 * live crawl of its adagents.json (which stores what it finds and emits feed events).
 */
import type { Crawler } from '../crawl/crawler.js'
import type { RegistryRepository } from '../db/repository.js'
import { compact } from '../db/json.js'
import type { PublisherRecord } from './types.js'

/** The wire `ResolvedProperty` of a stored publisher. */
export async function resolvedProperty(
  repository: RegistryRepository,
  publisher: PublisherRecord,
): Promise<Record<string, unknown>> {
  const [properties, agents] = await Promise.all([
    repository.publishers.getProperties(publisher.domain),
    repository.authorizations.agentsOfPublisher(publisher.domain),
  ])
  return compact({
    publisher_domain: publisher.domain,
    source: publisher.source === 'community' ? 'discovered' : publisher.source,
    authorized_agents: agents.map((agent) =>
      compact({ url: agent.agent_url, authorized_for: agent.authorized_for ?? undefined }),
    ),
    properties: properties.map((property) => ({
      id: property.property_id,
      type: property.property_type,
      name: property.name,
      identifiers: property.identifiers,
      tags: property.tags,
    })),
    contact: publisher.contact,
    // `hosted`: registry-held, and the origin verified it points at the hosted file.
    verified:
      (publisher.source === 'adagents_json' && publisher.valid === true) || publisher.source === 'hosted',
  })
}

const usable = (publisher: PublisherRecord | undefined): publisher is PublisherRecord =>
  publisher !== undefined && (publisher.valid === true || publisher.source !== 'adagents_json')

/** Resolves a publisher domain; `undefined` when nothing is known and the live read finds no valid file. */
export async function resolveProperty(
  repository: RegistryRepository,
  crawler: Crawler,
  domain: string,
  options: { live: boolean } = { live: true },
): Promise<Record<string, unknown> | undefined> {
  const stored = await repository.publishers.getPublisher(domain)
  if (usable(stored)) return resolvedProperty(repository, stored)
  if (!options.live || stored) return undefined
  const { inspection } = await crawler.crawlPublisher(domain, 'crawler')
  if (!inspection.valid) return undefined
  const fresh = await repository.publishers.getPublisher(domain)
  return usable(fresh) ? resolvedProperty(repository, fresh) : undefined
}
