/**
 * `POST /api/brands/setup-my-brand`: a hosted brand.json for a domain the caller's organization owns. A domain
 * is owned once its origin proved control through the claim + verify-origin flow (routes/hosted.ts); the
 * registry then serves the document at `/hosted/{domain}/brand.json` and answers the pointer the domain's own
 * `/.well-known/brand.json` should carry.
 */
import { Hono } from 'hono'
import { brandFactsFrom } from '../domain/brand-json.js'
import { BRAND_SCHEMA, hostedBrandJsonUrl } from '../domain/hosted.js'
import { newId } from '../domain/ids.js'
import { normalizeDomain } from '../domain/names.js'
import type { BrandRecord } from '../domain/types.js'
import { brandSchemaErrors } from '../spec/adagents-schema.js'
import { requireHostedDomainOwner } from '../auth/authorize.js'
import type { RegistryDeps } from '../deps.js'
import { HttpError, readBody, reply, requireOrg, requirePrincipal } from './http.js'

interface SetupBody {
  domain: string
  brand_name: string
  brand_json?: Record<string, unknown>
  logo_url?: string
  brand_color?: string
}

type JsonObject = Record<string, unknown>
const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const HEX = /^#[0-9a-fA-F]{6}$/

/** Why a logo URL is refused (https, ≤ 2048 characters, no credentials, backslashes or markup), or undefined. */
export function logoUrlProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string'
  if (value.length > 2048) return 'must be at most 2048 characters'
  if (/[\\<>"'`\s]/.test(value)) return 'must not contain backslashes, whitespace or markup characters'
  if (!URL.canParse(value)) return 'must be an absolute URL'
  const url = new URL(value)
  if (url.protocol !== 'https:') return 'must be an https URL'
  if (url.username || url.password) return 'must not carry credentials'
  return undefined
}

/** Every logo URL and primary color of a brand.json draft that breaks the hosting rules. */
function draftProblems(document: JsonObject): string[] {
  const problems: string[] = []
  const visit = (value: unknown, path: string): void => {
    if (Array.isArray(value)) return value.forEach((item, index) => visit(item, `${path}.${index}`))
    if (!isObject(value)) return
    for (const [key, item] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key
      if (key === 'logos' && Array.isArray(item)) {
        item.forEach((logo, index) => {
          const problem = isObject(logo) && 'url' in logo ? logoUrlProblem(logo.url) : undefined
          if (problem) problems.push(`brand_json.${at}.${index}.url ${problem}`)
        })
      } else if (key === 'colors' && isObject(item) && item.primary !== undefined) {
        const colors = Array.isArray(item.primary) ? item.primary : [item.primary]
        if (!colors.every((color) => typeof color === 'string' && HEX.test(color)))
          problems.push(`brand_json.${at}.primary must use #RRGGBB`)
      }
      visit(item, at)
    }
  }
  visit(document, '')
  return problems
}

const brandId = (name: string): string =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 64) || 'brand'

/** The brand.json built from the simple fields (no draft given). */
function builtDocument(body: SetupBody, domain: string, at: string): JsonObject {
  return {
    $schema: BRAND_SCHEMA,
    house: { domain, name: body.brand_name },
    brands: [
      {
        id: brandId(body.brand_name),
        names: [{ en: body.brand_name }],
        keller_type: 'master',
        url: `https://${domain}`,
        ...(body.logo_url ? { logos: [{ url: body.logo_url }] } : {}),
        ...(body.brand_color ? { colors: { primary: body.brand_color } } : {}),
      },
    ],
    last_updated: at,
  }
}

/** The brand-setup route. */
export function brandSetupRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()
  const { repository } = deps

  app.post('/api/brands/setup-my-brand', async (c) => {
    const principal = await requirePrincipal(c, deps)
    const orgId = requireOrg(principal)
    const body = await readBody<SetupBody>(c, 'setupMyBrand')
    const domain = normalizeDomain(body.domain)
    if (!domain) throw new HttpError(400, 'invalid_domain', 'Invalid domain format')
    if (body.brand_name.trim() === '') throw new HttpError(400, 'missing_field', 'brand_name is required')
    const logoProblem = body.logo_url === undefined ? undefined : logoUrlProblem(body.logo_url)
    if (logoProblem) throw new HttpError(400, 'invalid_logo_url', `logo_url ${logoProblem}`)
    if (body.brand_color !== undefined && !HEX.test(body.brand_color))
      throw new HttpError(400, 'invalid_brand_color', 'brand_color must use #RRGGBB')

    await requireHostedDomainOwner(deps, orgId, domain)

    const at = new Date(deps.now()).toISOString()
    const document = body.brand_json ? { ...body.brand_json } : builtDocument(body, domain, at)
    const problems = draftProblems(document)
    if (problems.length > 0) throw new HttpError(400, 'invalid_brand_json', problems.slice(0, 5).join('; '))
    const schemaErrors = brandSchemaErrors(document)
    if (schemaErrors.length > 0)
      throw new HttpError(
        400,
        'invalid_brand_json',
        `brand_json does not match the brand.json schema: ${schemaErrors
          .slice(0, 3)
          .map((error) => `${error.instancePath || '(root)'} ${error.message ?? 'is invalid'}`)
          .join('; ')}`,
      )
    if ('authoritative_location' in document)
      throw new HttpError(400, 'invalid_brand_json', 'brand_json must be a full document, not a pointer')
    const facts = brandFactsFrom(document, domain)
    if (!facts) throw new HttpError(400, 'invalid_brand_json', `brand_json names no brand for ${domain}`)

    const hostedUrl = hostedBrandJsonUrl(deps.publicUrl(c), domain)
    const existing = await repository.brands.getBrand(domain)
    const brand: BrandRecord = {
      domain,
      id: existing?.id ?? newId(),
      ...facts,
      brand_name: facts.brand_name || body.brand_name,
      source: 'hosted',
      document,
      document_url: hostedUrl,
      verified: true,
      created_at: existing?.created_at ?? at,
      updated_at: at,
    }
    await repository.brands.putBrand(brand, {
      editor_name: principal.id,
      edit_summary: existing?.source === 'hosted' ? 'hosted brand.json updated' : 'hosted brand.json set up',
      source: 'hosted',
    })
    return reply(c, deps, 'setupMyBrand', {
      domain,
      has_brand_json: true,
      hosted_brand_json_url: hostedUrl,
      pointer_snippet: JSON.stringify({ $schema: BRAND_SCHEMA, authoritative_location: hostedUrl }),
    })
  })

  return app
}
