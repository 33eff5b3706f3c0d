/** Validation Tools: validate a domain's adagents.json, and generate a compliant one. */
import { Hono } from 'hono'
import { checkAdagents } from '../crawl/adagents.js'
import { compact } from '../db/json.js'
import { normalizeDomain } from '../domain/names.js'
import type { RegistryDeps } from '../deps.js'
import { HttpError, readBody, reply } from './http.js'

const ADAGENTS_SCHEMA_URL = 'https://adcontextprotocol.org/schemas/3.1.19/adagents.json'

/** The validation routes. */
export function validationRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()

  app.post('/api/adagents/validate', async (c) => {
    const body = await readBody<{ domain: string }>(c, 'validateAdagents')
    if (body.domain.trim() === '') throw new HttpError(400, 'missing_field', 'Domain is required')
    const domain = normalizeDomain(body.domain)
    if (!domain) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
    const inspection = await deps.crawler.inspectAdagents(domain)
    const validation = compact({
      valid: inspection.valid,
      errors: inspection.errors,
      warnings: inspection.warnings,
      domain,
      url: inspection.url,
      status_code: inspection.status_code,
      response_bytes: inspection.response_bytes,
      resolved_url: inspection.resolved_url,
      raw_data: inspection.raw_data,
      discovery_method: inspection.discovery_method,
    })
    return reply(c, deps, 'validateAdagents', {
      success: true,
      data: { domain, found: inspection.status_code === 200, validation },
      timestamp: new Date(deps.now()).toISOString(),
    })
  })

  app.post('/api/adagents/create', async (c) => {
    const body = await readBody<{
      authorized_agents: unknown[]
      include_schema?: boolean
      include_timestamp?: boolean
      properties?: unknown[]
      formats?: unknown[]
      placements?: unknown[]
      placement_tags?: Record<string, unknown>
      catalog_etag?: string
    }>(c, 'createAdagents')
    const hasCatalog = Boolean(body.properties?.length || body.formats?.length || body.placements?.length)
    if (body.authorized_agents.length === 0 && !hasCatalog) {
      throw new HttpError(
        400,
        'invalid_request',
        'give at least one authorized agent, or catalog content (properties, formats, placements)',
      )
    }
    const document = compact({
      $schema: body.include_schema === false ? undefined : ADAGENTS_SCHEMA_URL,
      authorized_agents: body.authorized_agents,
      properties: body.properties,
      formats: body.formats,
      placements: body.placements,
      placement_tags: body.placement_tags,
      catalog_etag: body.catalog_etag,
      last_updated: body.include_timestamp === false ? undefined : new Date(deps.now()).toISOString(),
    })
    const { errors, warnings } = checkAdagents(document)
    if (errors.length > 0) {
      throw new HttpError(
        400,
        'invalid_adagents',
        `the proposed adagents.json is invalid: ${errors
          .slice(0, 3)
          .map((issue) => `${issue.field} ${issue.message}`)
          .join('; ')}`,
        { errors },
      )
    }
    return reply(c, deps, 'createAdagents', {
      success: true,
      data: {
        success: true,
        adagents_json: JSON.stringify(document, null, 2),
        validation: { valid: true, errors, warnings, domain: '', url: '', discovery_method: 'direct' },
      },
      timestamp: new Date(deps.now()).toISOString(),
    })
  })

  return app
}
