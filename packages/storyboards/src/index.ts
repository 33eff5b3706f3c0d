export {
  ADCP_VERSION,
  defaultBundleDir,
  loadBundle,
  type Bundle,
  type BundleEntry,
  type StoryboardScope,
} from './bundle.js'
export { capabilityGate, storyboardGate, type AgentProfile, type Gate } from './applicability.js'
export { CHECK_KINDS } from './grade.js'
export { StoryboardError, type StoryboardErrorCode } from './errors.js'
export { parseExpression, evaluateExpression } from './expression.js'
export { resolveAll, resolvePath } from './path.js'
export { renderReport, storyboardLine } from './report.js'
export type * from './result.js'
export { runStoryboards, withScenarios, type RunOptions } from './run.js'
export { createSchemaValidator, type SchemaValidator } from './schemas.js'
export { AGENT_URL_PLACEHOLDERS } from './substitute.js'
export type { Protocol } from './caller.js'
export { ADCP_A2A_EXTENSION, a2aInvocation } from './deprecated.js'
export type * from './types.js'
export {
  startWebhookReceiver,
  type WebhookDelivery,
  type WebhookReceiverOptions,
  type WebhookSession,
} from './webhook-receiver.js'
