/**
 * Fast, equivalent validation of requests that carry creative manifests. The generated `AssetSchema` is the
 * official `oneOf` of 20 asset types: zod tries every branch and builds issues for the 19 that fail, which made
 * schema validation ~90% of a preview call. Here the request is validated once with its manifests' `assets`
 * emptied (everything else unchanged), then each asset against the one branch its `asset_type` names (every
 * branch requires a distinct `asset_type` constant, so this is the same verdict), each distinct asset once per
 * request. A batch of creatives from one campaign shares most assets (click URL, logo, texts): they are
 * checked once for the whole batch. Assets whose type is unknown fall back to the full union for its error.
 */
import {
  AssetSchema,
  AudioAssetSchema,
  CardAssetSchema,
  CssAssetSchema,
  HtmlAssetSchema,
  ImageAssetSchema,
  JavascriptAssetSchema,
  MarkdownAssetSchema,
  parseShape,
  TextAssetSchema,
  UrlAssetSchema,
  VideoAssetSchema,
  WebhookAssetSchema,
  ZipAssetSchema,
} from '@adwire/schemas'
import type { z } from 'zod'
import { CreativeError } from './errors.js'

const ASSET_KEY = /^[a-z0-9_]+$/u

/** The union branches that are plain objects with a required `asset_type` literal, by that literal. */
const BY_TYPE = new Map<string, z.ZodType>()
for (const schema of [
  ImageAssetSchema,
  VideoAssetSchema,
  AudioAssetSchema,
  TextAssetSchema,
  UrlAssetSchema,
  HtmlAssetSchema,
  JavascriptAssetSchema,
  ZipAssetSchema,
  WebhookAssetSchema,
  CssAssetSchema,
  MarkdownAssetSchema,
  CardAssetSchema,
] as z.ZodType[]) {
  const literal = (schema as { shape?: Record<string, { _zod?: { def?: { values?: unknown[] } } }> }).shape
    ?.asset_type?._zod?.def?.values
  if (literal?.length === 1 && typeof literal[0] === 'string') BY_TYPE.set(literal[0], schema)
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Per-request memo: asset JSON → its parsed value (valid) or the error message. */
type Memo = Map<string, { ok: true; value: unknown } | { ok: false; message: string }>

function checkAsset(
  value: unknown,
  memo: Memo,
): { ok: true; value: unknown } | { ok: false; message: string } {
  const key = JSON.stringify(value)
  const known = memo.get(key)
  if (known) return known
  const type = isObject(value) && typeof value.asset_type === 'string' ? value.asset_type : undefined
  const schema = (type !== undefined && BY_TYPE.get(type)) || AssetSchema
  const parsed = schema.safeParse(value)
  let verdict: { ok: true; value: unknown } | { ok: false; message: string }
  if (parsed.success) verdict = { ok: true, value: parsed.data }
  else {
    try {
      parseShape(AssetSchema, value, 'asset') // the full union's message, as the whole-request parse gave it
      verdict = { ok: false, message: 'invalid asset' }
    } catch (error) {
      verdict = { ok: false, message: (error as Error).message.replace(/^invalid asset: /, '') }
    }
  }
  memo.set(key, verdict)
  return verdict
}

/** Validates the assets of one manifest; returns them as parsed, or throws INVALID_REQUEST at `path`. */
function checkAssets(assets: unknown, path: string, memo: Memo): Record<string, unknown> {
  if (!isObject(assets))
    throw new CreativeError('INVALID_REQUEST', `invalid ${path}: expected an object of assets`, {
      field: path,
    })
  const out: Record<string, unknown> = {}
  for (const [key, slot] of Object.entries(assets)) {
    if (!ASSET_KEY.test(key)) {
      out[key] = slot
      continue
    }
    const field = `${path}.${key}`
    const items = Array.isArray(slot) ? slot : [slot]
    if (Array.isArray(slot) && slot.length === 0)
      throw new CreativeError('INVALID_REQUEST', `invalid ${field}: an asset list needs at least one asset`, {
        field,
      })
    const parsed = items.map((item, index) => {
      const verdict = checkAsset(item, memo)
      if (!verdict.ok) {
        const at = Array.isArray(slot) ? `${field}[${index}]` : field
        throw new CreativeError('INVALID_REQUEST', `invalid ${at}: ${verdict.message}`, { field: at })
      }
      return verdict.value
    })
    out[key] = Array.isArray(slot) ? parsed : parsed[0]
  }
  return out
}

/**
 * Parses `input` with `schema` (a request schema whose manifests sit at `creative_manifest` and
 * `requests[i].creative_manifest`), validating manifest assets the fast way described above.
 *
 * @example
 * const request = parseWithManifests(PreviewCreativeRequestSchema, input, 'preview_creative request')
 */
export function parseWithManifests<T extends z.ZodType>(
  schema: T,
  input: unknown,
  what: string,
): z.output<T> {
  if (!isObject(input)) return parseShape(schema, input, what)
  const slots: {
    path: string
    assets: unknown
    place: (assets: unknown, parsed: Record<string, unknown>) => void
  }[] = []
  const strip = (
    manifest: unknown,
    path: string,
    place: (assets: unknown, parsed: Record<string, unknown>) => void,
  ) => {
    if (!isObject(manifest) || !('assets' in manifest)) return manifest
    slots.push({ path: `${path}.assets`, assets: manifest.assets, place })
    return { ...manifest, assets: {} }
  }
  const skeleton: Record<string, unknown> = { ...input }
  if ('creative_manifest' in input)
    skeleton.creative_manifest = strip(input.creative_manifest, 'creative_manifest', (assets, parsed) => {
      ;(parsed.creative_manifest as Record<string, unknown>).assets = assets
    })
  if (Array.isArray(input.requests))
    skeleton.requests = input.requests.map((item: unknown, index) =>
      isObject(item) && 'creative_manifest' in item
        ? {
            ...item,
            creative_manifest: strip(
              item.creative_manifest,
              `requests[${index}].creative_manifest`,
              (assets, parsed) => {
                const entry = (parsed.requests as Record<string, unknown>[])[index]!
                ;(entry.creative_manifest as Record<string, unknown>).assets = assets
              },
            ),
          }
        : item,
    )
  let parsed: Record<string, unknown>
  try {
    parsed = parseShape(schema, skeleton, what) as Record<string, unknown>
  } catch (error) {
    throw CreativeError.from(error)
  }
  const memo: Memo = new Map()
  for (const slot of slots) slot.place(checkAssets(slot.assets, slot.path, memo), parsed)
  return parsed as z.output<T>
}
