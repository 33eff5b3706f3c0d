/**
 * The AdCP 3.1.19 shapes @adwire/schemas exports, by the schema file they come from, and the public name each
 * gets. Everything these reference is generated too (as `<Name>Schema`), so the list only names entry points.
 */
export interface RootShape {
  /** Path below `schemas/3.1.19/`, optionally with a `#/definitions/...` pointer. */
  readonly file: string
  /** Public name: the schema is exported as `${name}Schema`, its inferred type as `${name}`. */
  readonly name: string
}

export const ROOT_SHAPES: readonly RootShape[] = [
  // core
  { file: 'core/format.json', name: 'Format' },
  { file: 'core/format-id.json', name: 'FormatId' },
  { file: 'core/creative-manifest.json', name: 'CreativeManifest' },
  { file: 'core/assets/asset-union.json', name: 'Asset' },
  { file: 'core/assets/audio-asset.json', name: 'AudioAsset' },
  { file: 'core/assets/brief-asset.json', name: 'BriefAsset' },
  { file: 'core/assets/card-asset.json', name: 'CardAsset' },
  { file: 'core/assets/catalog-asset.json', name: 'CatalogAsset' },
  { file: 'core/assets/css-asset.json', name: 'CssAsset' },
  { file: 'core/assets/daast-asset.json', name: 'DaastAsset' },
  { file: 'core/assets/daast-tracker-asset.json', name: 'DaastTrackerAsset' },
  { file: 'core/assets/html-asset.json', name: 'HtmlAsset' },
  { file: 'core/assets/image-asset.json', name: 'ImageAsset' },
  { file: 'core/assets/javascript-asset.json', name: 'JavascriptAsset' },
  { file: 'core/assets/markdown-asset.json', name: 'MarkdownAsset' },
  { file: 'core/assets/pixel-tracker-asset.json', name: 'PixelTrackerAsset' },
  { file: 'core/assets/published-post-asset.json', name: 'PublishedPostAsset' },
  { file: 'core/assets/text-asset.json', name: 'TextAsset' },
  { file: 'core/assets/url-asset.json', name: 'UrlAsset' },
  { file: 'core/assets/vast-asset.json', name: 'VastAsset' },
  { file: 'core/assets/video-asset.json', name: 'VideoAsset' },
  { file: 'core/brand-ref.json', name: 'BrandRef' },
  // 3.1.19 has no separate brand-manifest file: a brand's identity document is brand.json's `brand` definition.
  { file: 'brand.json#/definitions/brand', name: 'BrandManifest' },
  { file: 'core/error.json', name: 'AdcpError' },
  { file: 'core/pagination-request.json', name: 'PaginationRequest' },
  { file: 'core/pagination-response.json', name: 'PaginationResponse' },
  { file: 'core/context.json', name: 'Context' },
  { file: 'core/push-notification-config.json', name: 'PushNotificationConfig' },
  // creative tasks
  { file: 'creative/list-creative-formats-request.json', name: 'ListCreativeFormatsRequest' },
  { file: 'creative/list-creative-formats-response.json', name: 'ListCreativeFormatsResponse' },
  { file: 'media-buy/build-creative-request.json', name: 'BuildCreativeRequest' },
  { file: 'media-buy/build-creative-response.json', name: 'BuildCreativeResponse' },
  { file: 'creative/preview-creative-request.json', name: 'PreviewCreativeRequest' },
  { file: 'creative/preview-creative-response.json', name: 'PreviewCreativeResponse' },
  // the seller's task requests (the agents validate requests with these, see @adwire/agent-server parseRequest)
  { file: 'account/list-accounts-request.json', name: 'ListAccountsRequest' },
  { file: 'account/sync-accounts-request.json', name: 'SyncAccountsRequest' },
  { file: 'account/sync-governance-request.json', name: 'SyncGovernanceRequest' },
  { file: 'creative/list-creatives-request.json', name: 'ListCreativesRequest' },
  { file: 'creative/sync-creatives-request.json', name: 'SyncCreativesRequest' },
  { file: 'media-buy/create-media-buy-request.json', name: 'CreateMediaBuyRequest' },
  { file: 'media-buy/get-media-buy-delivery-request.json', name: 'GetMediaBuyDeliveryRequest' },
  { file: 'media-buy/get-media-buys-request.json', name: 'GetMediaBuysRequest' },
  { file: 'media-buy/get-products-request.json', name: 'GetProductsRequest' },
  { file: 'media-buy/list-creative-formats-request.json', name: 'MediaBuyListCreativeFormatsRequest' },
  { file: 'media-buy/provide-performance-feedback-request.json', name: 'ProvidePerformanceFeedbackRequest' },
  { file: 'media-buy/update-media-buy-request.json', name: 'UpdateMediaBuyRequest' },
  { file: 'protocol/get-adcp-capabilities-request.json', name: 'GetAdcpCapabilitiesRequest' },
  { file: 'protocol/get-task-status-request.json', name: 'GetTaskStatusRequest' },
  { file: 'compliance/comply-test-controller-request.json', name: 'ComplyTestControllerRequest' },
  // webhook envelopes
  { file: 'core/mcp-webhook-payload.json', name: 'McpWebhookPayload' },
  { file: 'core/async-response-data.json', name: 'AsyncResponseData' },
  { file: 'media-buy/media-buy-delivery-webhook-result.json', name: 'MediaBuyDeliveryWebhookResult' },
  { file: 'property/property-list-changed-webhook.json', name: 'PropertyListChangedWebhook' },
  { file: 'collection/collection-list-changed-webhook.json', name: 'CollectionListChangedWebhook' },
  // enums
  { file: 'enums/error-code.json', name: 'ErrorCode' },
  { file: 'enums/task-status.json', name: 'TaskStatus' },
  { file: 'enums/task-type.json', name: 'TaskType' },
  { file: 'enums/media-buy-status.json', name: 'MediaBuyStatus' },
  // well-known documents
  { file: 'adagents.json', name: 'AdagentsJson' },
  { file: 'brand.json', name: 'BrandJson' },
]
