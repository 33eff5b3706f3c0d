export * from './generated/schemas.js'
export * from './a2a.js'
export { isRecord, type JsonObject } from './json.js'
export { SchemaError, formatPath, toSchemaIssues, type SchemaErrorCode, type SchemaIssue } from './errors.js'
export { parseFormatId, parseShape } from './parse.js'
export {
  detectWebhookFormat,
  parseWebhookPayload,
  type A2AWebhook,
  type McpWebhook,
  type ParsedWebhookPayload,
  type ParseWebhookPayloadOptions,
  type WebhookData,
} from './webhook-payload.js'
