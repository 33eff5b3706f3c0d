/**
 * The AdCP 3.1.19 standard creative format catalog. Every entry is a `core/format.json` Format whose format_id
 * is `{agent_url, id}` with the serving agent's URL; `type` (display, video, audio, dooh) is carried as an
 * extra property, which format.json allows, so the `type` filter of list_creative_formats has something to read.
 */
import { FormatSchema, parseShape, type Format } from '@adwire/schemas'
import { displaySpecs } from './display-formats.js'
import { parseOrThrow } from './errors.js'
import type { FormatType, Spec } from './format-spec.js'
import { mediaSpecs } from './media-formats.js'

export type { FormatType } from './format-spec.js'

/** A catalog format: the wire Format (`core/format.json`) plus the `type` the list filter reads. */
export type CatalogFormat = Format & { type: FormatType }

const specs = (): Spec[] => [...displaySpecs(), ...mediaSpecs()]

/**
 * An agent URL in the form format_ids are compared in: trailing slashes, and the `/mcp` or `/a2a` endpoint
 * suffix, do not distinguish agent URLs.
 *
 * @example
 * normalizeAgentUrl('https://creative.example/mcp/') // 'https://creative.example'
 */
export function normalizeAgentUrl(url: string): string {
  // The agent's own MCP and A2A endpoint URLs name it too (what a buyer was given is often one of them).
  return url.replace(/\/+$/, '').replace(/\/(?:mcp|a2a)$/, '')
}

function build(agentUrl: string, spec: Spec): CatalogFormat {
  const format = {
    format_id: { agent_url: agentUrl, id: spec.id },
    name: spec.name,
    type: spec.type,
    description: spec.description,
    ...(spec.renders ? { renders: spec.renders } : {}),
    assets: spec.assets,
    supported_macros: [...spec.macros],
    accessibility: {
      wcag_level: spec.type === 'display' ? 'AA' : 'A',
      requires_accessible_assets: spec.type === 'display',
    },
    ...spec.extra,
  }
  return parseOrThrow(() => parseShape(FormatSchema, format, `catalog format ${spec.id}`)) as CatalogFormat
}

/**
 * The formats one agent serves, in list order, looked up by format_id (`core/format-id.json`).
 *
 * @example
 * const catalog = standardCatalog('https://creative.example')
 * catalog.get({ agent_url: 'https://creative.example/mcp', id: 'display_300x250_image' })?.name
 */
export class FormatCatalog {
  readonly agentUrl: string
  readonly formats: readonly CatalogFormat[]
  private readonly byId: Map<string, CatalogFormat>

  constructor(agentUrl: string, formats: readonly CatalogFormat[]) {
    this.agentUrl = agentUrl
    this.formats = formats
    this.byId = new Map(formats.map((format) => [format.format_id.id, format]))
  }

  /** The format with this id, if the format_id's agent_url is this agent's. */
  get(formatId: { agent_url: string; id: string }): CatalogFormat | undefined {
    if (normalizeAgentUrl(formatId.agent_url) !== normalizeAgentUrl(this.agentUrl)) return undefined
    return this.byId.get(formatId.id)
  }

  /**
   * A new catalog with more formats appended (a format with an id already listed replaces it), e.g. seeded
   * test fixtures or an agent's own formats. Each is validated against `core/format.json` (FormatSchema);
   * an invalid one throws a `FormatsError` (INVALID_REQUEST or INVALID_FORMAT_ID, with its `field`).
   *
   * @example
   * const catalog = standardCatalog(agentUrl).with([
   *   { format_id: { agent_url: agentUrl, id: 'homepage_takeover' }, name: 'Homepage Takeover', type: 'display' },
   * ])
   */
  with(formats: readonly (Format & { type?: FormatType })[]): FormatCatalog {
    const extra = formats.map(
      (format) => parseOrThrow(() => parseShape(FormatSchema, format, 'format')) as CatalogFormat,
    )
    return new FormatCatalog(this.agentUrl, [
      ...this.formats.filter((f) => !extra.some((e) => e.format_id.id === f.format_id.id)),
      ...extra,
    ])
  }
}

const cache = new Map<string, FormatCatalog>()

/**
 * The standard catalog (display IAB sizes as image, HTML5, composed and generative units; responsive and native;
 * video and VAST; audio and DAAST; DOOH) for the agent at `agentUrl`, which every format_id names. Built and
 * validated once per URL; the same instance is returned afterwards. An `agentUrl` that is not an absolute URI
 * throws a `FormatsError` (INVALID_REQUEST, field `format_id.agent_url`).
 *
 * @example
 * const catalog = standardCatalog('https://creative.example')
 * catalog.formats.length // 44
 * const withFixtures = catalog.with([{ format_id: { agent_url: 'https://creative.example', id: 'seeded' }, name: 'Seeded' }])
 */
export function standardCatalog(agentUrl: string): FormatCatalog {
  let catalog = cache.get(agentUrl)
  if (!catalog) {
    catalog = new FormatCatalog(
      agentUrl,
      specs().map((spec) => build(agentUrl, spec)),
    )
    cache.set(agentUrl, catalog)
  }
  return catalog
}

/**
 * Width and height of a format's primary render when it is fixed, else undefined (responsive or dimensionless).
 *
 * @example
 * fixedSize(catalog.get({ agent_url, id: 'display_728x90_image' })!) // { width: 728, height: 90 }
 */
export function fixedSize(format: Format): { width: number; height: number } | undefined {
  const dimensions = format.renders?.[0]?.dimensions
  if (!dimensions || dimensions.width === undefined || dimensions.height === undefined) return undefined
  if (dimensions.responsive?.width || dimensions.responsive?.height) return undefined
  return { width: dimensions.width, height: dimensions.height }
}

/**
 * Whether any render of the format adapts to its container (`dimensions.responsive`).
 *
 * @example
 * isResponsive(catalog.get({ agent_url, id: 'display_responsive_html' })!) // true
 */
export function isResponsive(format: Format): boolean {
  return (format.renders ?? []).some(
    (render) =>
      render.dimensions?.responsive?.width === true || render.dimensions?.responsive?.height === true,
  )
}
