/**
 * preview_creative: single and batch previews of complete manifests, one per `inputs` variant with its macros
 * substituted, as URLs under `${agentUrl}/previews/{id}` (kept in a preview store until `expires_at`) or inline
 * HTML. A batch validates the request once (the generated schema checks each asset against the one asset type
 * its `asset_type` names), resolves each format once, renders identical items once and writes the store once.
 */
import { createHash } from 'node:crypto'
import { AgentError, parseRequest } from '@adwire/agent-server'
import {
  parseFormatId,
  PreviewCreativeRequestSchema,
  type AdcpError as AdcpErrorObject,
  type PreviewCreativeRequest,
} from '@adwire/schemas'
import { fixedSize, standardCatalog, type CatalogFormat } from '@adwire/formats'
import type { CreativeContext } from './context.js'
import { CreativeError, creativeRequestError, echoContext } from './errors.js'
import { manifestIssues, slotsOf, type AssetValue } from './manifest.js'
import { defaultPreviewStore, type StoredPreview } from './preview-store.js'
import { escapeHtml } from './render.js'

/** How long URL previews live. */
export const PREVIEW_TTL_MS = 60 * 60 * 1000

export interface PreviewInput {
  name: string
  macros?: Record<string, string>
  context_description?: string
}
export type PreviewRender =
  | {
      render_id: string
      output_format: 'url'
      preview_url: string
      role: string
      dimensions?: { width: number; height: number }
      embedding: Embedding
    }
  | {
      render_id: string
      output_format: 'html'
      preview_html: string
      role: string
      dimensions?: { width: number; height: number }
      embedding: Embedding
    }
interface Embedding {
  recommended_sandbox: string
  requires_https: boolean
  supports_fullscreen: boolean
}
export interface PreviewEntry {
  preview_id: string
  renders: PreviewRender[]
  input: PreviewInput
  format_id?: { agent_url: string; id: string }
}
export interface PreviewBlock {
  previews: PreviewEntry[]
  expires_at: string
}
export type PreviewCreativeResponse =
  | ({ status: 'completed'; response_type: 'single'; context?: Record<string, unknown> } & PreviewBlock)
  | {
      status: 'completed'
      response_type: 'batch'
      results: (
        | { success: true; creative_id: string; response: PreviewBlock }
        | { success: false; creative_id: string; errors: AdcpErrorObject[] }
      )[]
      context?: Record<string, unknown>
    }

interface Manifest {
  format_id?: { agent_url: string; id: string }
  format_kind?: string
  assets: Record<string, unknown>
}

const EMBEDDING: Embedding = {
  recommended_sandbox: 'allow-popups allow-popups-to-escape-sandbox',
  requires_https: false,
  supports_fullscreen: false,
}
const DEFAULT_INPUTS: PreviewInput[] = [{ name: 'default' }]

/** Replaces `{MACRO}` in every string of the assets (data: URLs excepted) with the input's values. */
function substitute(value: unknown, macros: Record<string, string>, pattern: RegExp): unknown {
  if (typeof value === 'string') {
    if (value.startsWith('data:')) return value
    return value.replace(pattern, (whole, name: string) => macros[name] ?? whole)
  }
  if (Array.isArray(value)) return value.map((item) => substitute(item, macros, pattern))
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, substitute(item, macros, pattern)]),
    )
  }
  return value
}

function first(value: unknown): AssetValue | undefined {
  const asset = Array.isArray(value) ? value[0] : value
  return typeof asset === 'object' && asset !== null ? (asset as AssetValue) : undefined
}

/** The preview page of one manifest: its assets laid out in the format's slot order, inside the format's box. */
function page(format: CatalogFormat, assets: Record<string, unknown>): string {
  const size = fixedSize(format)
  const click = first(assets.click_url)
  const parts: string[] = []
  // A built serving tag is the creative itself: when the manifest carries one, the page shows it alone.
  const tag = slotsOf(format).find(
    (slot) => slot.asset_type === 'html' && first(assets[slot.asset_id])?.asset_type === 'html',
  )
  for (const slot of tag ? [tag] : slotsOf(format)) {
    const asset = first(assets[slot.asset_id])
    if (!asset) continue
    const s = (key: string) => (typeof asset[key] === 'string' ? (asset[key] as string) : '')
    switch (asset.asset_type) {
      case 'image':
        parts.push(
          `<img class="${escapeHtml(slot.asset_id)}" src="${escapeHtml(s('url'))}" width="${Number(asset.width)}" height="${Number(asset.height)}" alt="${escapeHtml(s('alt_text'))}">`,
        )
        break
      case 'text':
        parts.push(
          slot.asset_id === 'headline'
            ? `<h2>${escapeHtml(s('content'))}</h2>`
            : `<p class="${escapeHtml(slot.asset_id)}">${escapeHtml(s('content'))}</p>`,
        )
        break
      case 'html':
        parts.push(
          `<iframe title="${escapeHtml(format.name)}" sandbox="${EMBEDDING.recommended_sandbox}" srcdoc="${escapeHtml(s('content'))}" style="border:0;width:${size ? `${size.width}px` : '100%'};height:${size ? `${size.height}px` : '250px'}"></iframe>`,
        )
        break
      case 'video':
        parts.push(
          `<video controls playsinline src="${escapeHtml(s('url'))}" width="${Number(asset.width) || ''}" height="${Number(asset.height) || ''}"></video>`,
        )
        break
      case 'audio':
        parts.push(`<audio controls src="${escapeHtml(s('url'))}"></audio>`)
        break
      case 'vast':
      case 'daast':
        parts.push(
          `<p class="tag">${asset.asset_type.toUpperCase()} ${s('url') ? `tag: <code>${escapeHtml(s('url'))}</code>` : `document of ${s('content').length} characters`}</p>`,
        )
        break
    }
  }
  const box = size ? `width:${size.width}px;min-height:${size.height}px;` : 'max-width:1200px;'
  const inner = parts.join('')
  const body =
    click && typeof click.url === 'string' && !tag
      ? `<a href="${escapeHtml(click.url)}" target="_blank" rel="noopener">${inner}</a>`
      : inner
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Preview: ${escapeHtml(format.name)}</title><style>body{margin:0;font-family:Helvetica,Arial,sans-serif}.creative{${box}overflow:hidden}.creative img{display:block;max-width:100%;height:auto}.creative a{color:inherit;text-decoration:none}</style></head><body><div class="creative" data-format="${escapeHtml(format.format_id.id)}">${body}</div></body></html>`
}

interface Job {
  manifest: Manifest
  format: CatalogFormat
}

/**
 * Renders previews of already validated manifests (one per input), stores URL previews with one store write, and
 * returns one preview block per job. Identical (format, assets, input) work is done once. Used by
 * preview_creative and by build_creative's include_preview.
 */
export function renderJobs(
  jobs: readonly { job: Job; inputs: readonly PreviewInput[]; outputFormat: 'url' | 'html' }[],
  context: CreativeContext,
  withFormatId = false,
): PreviewBlock[] {
  const expiresAt = new Date(context.now.getTime() + PREVIEW_TTL_MS)
  const base = context.agentUrl.replace(/\/+$/, '')
  const memo = new Map<string, { id: string; html: string }>()
  const toStore = new Map<string, StoredPreview>()
  const blocks = jobs.map(({ job, inputs, outputFormat }) => {
    const size = fixedSize(job.format)
    const assetsKey = JSON.stringify(job.manifest.assets)
    const previews = inputs.map((input): PreviewEntry => {
      const macros: Record<string, string> = {
        ...(size ? { AD_WIDTH: String(size.width), AD_HEIGHT: String(size.height) } : {}),
        ...input.macros,
      }
      const key = `${job.format.format_id.id}\u0000${assetsKey}\u0000${JSON.stringify(macros)}`
      let rendered = memo.get(key)
      if (!rendered) {
        const names = Object.keys(macros).map((name) => name.replace(/[^A-Za-z0-9_]/g, ''))
        const pattern = new RegExp(`\\{(${names.filter(Boolean).join('|') || '(?!)'})\\}`, 'g')
        const html = page(
          job.format,
          substitute(job.manifest.assets, macros, pattern) as Record<string, unknown>,
        )
        rendered = { id: `pv_${createHash('sha256').update(html).digest('hex').slice(0, 32)}`, html }
        memo.set(key, rendered)
      }
      if (outputFormat === 'url') toStore.set(rendered.id, { html: rendered.html, expiresAt })
      const common = {
        render_id: `${rendered.id}_primary`,
        role: 'primary',
        ...(size ? { dimensions: size } : {}),
        embedding: EMBEDDING,
      }
      return {
        preview_id: rendered.id,
        renders: [
          outputFormat === 'url'
            ? { ...common, output_format: 'url', preview_url: `${base}/previews/${rendered.id}` }
            : { ...common, output_format: 'html', preview_html: rendered.html },
        ],
        input: { ...input },
        ...(withFormatId ? { format_id: { ...job.format.format_id } } : {}),
      }
    })
    return { previews, expires_at: expiresAt.toISOString() }
  })
  if (toStore.size > 0) (context.previews ?? defaultPreviewStore).putMany([...toStore])
  return blocks
}

/** build_creative's `preview` block for its built manifests. */
export function previewManifests(
  jobs: readonly Job[],
  inputs: readonly PreviewInput[] | undefined,
  outputFormat: 'url' | 'html',
  context: CreativeContext,
  withFormatId: boolean,
): PreviewBlock {
  const blocks = renderJobs(
    jobs.map((job) => ({ job, inputs: inputs ?? DEFAULT_INPUTS, outputFormat })),
    context,
    withFormatId,
  )
  return { previews: blocks.flatMap((block) => block.previews), expires_at: blocks[0]!.expires_at }
}

function formatIdOrThrow(value: unknown, field: string): void {
  if (value === undefined) return
  try {
    parseFormatId(value)
  } catch (error) {
    throw new CreativeError('INVALID_FORMAT_ID', (error as Error).message, { field })
  }
}

/** Resolves a manifest's format and checks the manifest meets it; field paths are prefixed with `at`. */
function resolve(
  formatId: { agent_url: string; id: string } | undefined,
  manifest: Manifest,
  at: string,
  lookup: (id: { agent_url: string; id: string }) => CatalogFormat | undefined,
): Job {
  const id = formatId ?? manifest.format_id
  if (!id) {
    throw new CreativeError(
      'FORMAT_NOT_SUPPORTED',
      'canonical (format_kind) manifests are not supported; send format_id',
      {
        field: `${at}creative_manifest.format_kind`,
      },
    )
  }
  const format = lookup(id)
  if (!format) {
    throw new CreativeError(
      'FORMAT_NOT_SUPPORTED',
      `format ${id.id} of ${id.agent_url} is not supported by this agent`,
      {
        field: formatId ? `${at}format_id` : `${at}creative_manifest.format_id`,
      },
    )
  }
  const issue = manifestIssues(format, manifest.assets)[0]
  if (issue) {
    throw new CreativeError(
      'VALIDATION_ERROR',
      `asset ${issue.asset_id} for ${format.format_id.id}: ${issue.message}`,
      {
        field: `${at}creative_manifest.assets.${issue.asset_id}`,
      },
    )
  }
  return { manifest, format }
}

/** The preview_creative task. */
export async function previewCreative(
  input: unknown,
  context: CreativeContext,
): Promise<PreviewCreativeResponse> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new CreativeError('INVALID_REQUEST', 'the request must be a JSON object')
  }
  const raw = input as Record<string, unknown>
  formatIdOrThrow(raw.format_id, 'format_id')
  formatIdOrThrow(
    (raw.creative_manifest as { format_id?: unknown } | undefined)?.format_id,
    'creative_manifest.format_id',
  )
  if (Array.isArray(raw.requests)) {
    raw.requests.forEach((item: unknown, index) => {
      const entry = (item ?? {}) as { format_id?: unknown; creative_manifest?: { format_id?: unknown } }
      formatIdOrThrow(entry.format_id, `requests[${index}].format_id`)
      formatIdOrThrow(entry.creative_manifest?.format_id, `requests[${index}].creative_manifest.format_id`)
    })
  }
  const request: PreviewCreativeRequest = parseRequest(
    PreviewCreativeRequestSchema,
    input,
    'preview_creative request',
    creativeRequestError,
  )
  const catalog = context.catalog ?? standardCatalog(context.agentUrl)
  const formats = new Map<string, CatalogFormat | undefined>()
  const lookup = (id: { agent_url: string; id: string }) => {
    const key = `${id.agent_url}\u0000${id.id}`
    if (!formats.has(key)) formats.set(key, catalog.get(id))
    return formats.get(key)
  }

  if (request.request_type === 'single') {
    const job = resolve(request.format_id, request.creative_manifest as Manifest, '', lookup)
    const [block] = renderJobs(
      [{ job, inputs: request.inputs ?? DEFAULT_INPUTS, outputFormat: request.output_format ?? 'url' }],
      context,
    )
    return { status: 'completed', response_type: 'single', ...block!, ...echoContext(input) }
  }
  if (request.request_type === 'batch') {
    const items = request.requests ?? []
    const resolved = items.map((item, index) => {
      try {
        return resolve(item.format_id, item.creative_manifest as Manifest, `requests[${index}].`, lookup)
      } catch (error) {
        return CreativeError.from(error)
      }
    })
    const ok = items.flatMap((item, index) => {
      const job = resolved[index]!
      return AgentError.is(job)
        ? []
        : [
            {
              job,
              inputs: item.inputs ?? DEFAULT_INPUTS,
              outputFormat: item.output_format ?? request.output_format ?? 'url',
            },
          ]
    })
    const blocks = renderJobs(ok, context)
    let next = 0
    const results = items.map((item, index) => {
      const job = resolved[index]!
      const ownId = (item as { creative_id?: unknown }).creative_id
      const creativeId = typeof ownId === 'string' ? ownId : `request_${index + 1}`
      if (AgentError.is(job))
        return { success: false as const, creative_id: creativeId, errors: [job.toAdcpError()] }
      return { success: true as const, creative_id: creativeId, response: blocks[next++]! }
    })
    return { status: 'completed', response_type: 'batch', results, ...echoContext(input) }
  }
  throw new CreativeError(
    'UNSUPPORTED_FEATURE',
    'variant previews need delivery data this agent does not keep',
    {
      field: 'request_type',
    },
  )
}
