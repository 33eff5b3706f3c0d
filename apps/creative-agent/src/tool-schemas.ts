/**
 * Compact JSON Schema hints for the MCP tool listings (the full official request schemas run to 10 to 120 KB
 * each). They describe the main fields only; the handlers validate every request against the full 3.1.19
 * shapes, and undeclared envelope fields are always accepted.
 */

const FORMAT_ID = {
  type: 'object',
  description: 'A format reference: always an object, never a bare string',
  properties: {
    agent_url: { type: 'string', format: 'uri', description: "The creative agent's URL" },
    id: { type: 'string', pattern: '^[a-zA-Z0-9_-]+$' },
    width: { type: 'integer' },
    height: { type: 'integer' },
    duration_ms: { type: 'number' },
  },
  required: ['agent_url', 'id'],
}
const MANIFEST = {
  type: 'object',
  description: 'A creative manifest: format_id and assets keyed by asset_id',
  properties: { format_id: FORMAT_ID, assets: { type: 'object' }, brand: { type: 'object' } },
}
const INPUTS = {
  type: 'array',
  description: 'Preview variants: one preview per input, with its macros substituted',
  items: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      macros: { type: 'object', additionalProperties: { type: 'string' } },
      context_description: { type: 'string' },
    },
    required: ['name'],
  },
}
const OUTPUT_FORMAT = { type: 'string', enum: ['url', 'html'] }

export const LIST_CREATIVE_FORMATS_HINT = {
  description: 'list_creative_formats request (creative/list-creative-formats-request.json)',
  properties: {
    format_ids: { type: 'array', items: FORMAT_ID, minItems: 1 },
    type: { type: 'string', enum: ['display', 'video', 'audio', 'dooh'] },
    asset_types: { type: 'array', items: { type: 'string' }, minItems: 1 },
    max_width: { type: 'integer' },
    max_height: { type: 'integer' },
    min_width: { type: 'integer' },
    min_height: { type: 'integer' },
    is_responsive: { type: 'boolean' },
    name_search: { type: 'string' },
    wcag_level: { type: 'string', enum: ['A', 'AA', 'AAA'] },
    pagination: {
      type: 'object',
      properties: {
        max_results: { type: 'integer', minimum: 1, maximum: 100 },
        cursor: { type: 'string' },
      },
    },
  },
}

export const BUILD_CREATIVE_HINT = {
  description:
    'build_creative request (media-buy/build-creative-request.json). Generation: creative_manifest.assets.promoted_offerings = {brand_manifest: {name, url, colors: {primary, secondary}}, inline_offerings: [{name, description, url}]}. Transformation: a complete manifest in another format. Set ext.adwire.async = true to run it as an async task (submitted, then webhooks to push_notification_config).',
  properties: {
    target_format_id: FORMAT_ID,
    target_format_ids: { type: 'array', items: FORMAT_ID, minItems: 1 },
    creative_manifest: MANIFEST,
    message: { type: 'string' },
    brand: { type: 'object' },
    mode: { type: 'string', enum: ['execute', 'estimate'] },
    quality: { type: 'string', enum: ['draft', 'production'] },
    include_preview: { type: 'boolean' },
    preview_inputs: INPUTS,
    preview_output_format: OUTPUT_FORMAT,
    ext: { type: 'object' },
  },
}

export const PREVIEW_CREATIVE_HINT = {
  description: 'preview_creative request (creative/preview-creative-request.json)',
  properties: {
    request_type: { type: 'string', enum: ['single', 'batch', 'variant'] },
    creative_manifest: MANIFEST,
    format_id: FORMAT_ID,
    inputs: INPUTS,
    output_format: OUTPUT_FORMAT,
    requests: {
      type: 'array',
      minItems: 1,
      maxItems: 50,
      items: {
        type: 'object',
        properties: {
          creative_manifest: MANIFEST,
          format_id: FORMAT_ID,
          inputs: INPUTS,
          output_format: OUTPUT_FORMAT,
        },
        required: ['creative_manifest'],
      },
    },
  },
  required: ['request_type'],
}
