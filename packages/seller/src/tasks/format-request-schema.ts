/**
 * The media-buy `list_creative_formats` request (AdCP 3.1.19 `media-buy/list-creative-formats-request.json`) for
 * the MCP tool's `inputSchema`: @adwire/schemas generates the creative-agent request of the same task name, whose
 * fields differ (no `type`, `account` or `include_pricing`; `publisher_domain` and `property_id` instead).
 * Validation is the official JSON Schema's, through `request` in the task declaration.
 */
import {
  AssetContentTypeSchema,
  ContextSchema,
  DisclosurePersistenceSchema,
  DisclosurePositionSchema,
  ExtSchema,
  FormatIdSchema,
  PaginationRequestSchema,
  PropertyIdSchema,
  VersionEnvelopeSchema,
  WcagLevelSchema,
} from '@adwire/schemas'
import { z } from 'zod'

/** `media-buy/list-creative-formats-request.json` as a zod schema (open, like the official one). */
export const MediaBuyListCreativeFormatsRequest = z.intersection(
  z.looseObject({
    format_ids: z.array(FormatIdSchema).min(1).optional(),
    asset_types: z.array(AssetContentTypeSchema).min(1).optional(),
    max_width: z.int().optional(),
    max_height: z.int().optional(),
    min_width: z.int().optional(),
    min_height: z.int().optional(),
    is_responsive: z.boolean().optional(),
    name_search: z.string().optional(),
    wcag_level: WcagLevelSchema.optional(),
    disclosure_positions: z.array(DisclosurePositionSchema).min(1).optional(),
    disclosure_persistence: z.array(DisclosurePersistenceSchema).min(1).optional(),
    output_format_ids: z.array(FormatIdSchema).min(1).optional(),
    input_format_ids: z.array(FormatIdSchema).min(1).optional(),
    publisher_domain: z.string().optional(),
    property_id: PropertyIdSchema.optional(),
    pagination: PaginationRequestSchema.optional(),
    context: ContextSchema.optional(),
    ext: ExtSchema.optional(),
  }),
  VersionEnvelopeSchema,
)
