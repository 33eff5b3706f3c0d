export type * from './stores.js'
export { ACTIVITY_RETENTION_SECONDS } from './stores.js'
export { MemoryClaimStore, MemoryConvergenceStore, MemoryOutboxStore } from './memory-stores.js'
export { createWebhookReceiver } from './receiver/receiver.js'
export { BodyTooLargeError } from './receiver/body.js'
export {
  acceptInTransaction,
  createMemoryInbox,
  type DeliveryInbox,
  type InboxDelivery,
  type InboxNonce,
  type InboxOutcome,
  type InboxTransaction,
} from './inbox.js'
export { registrationProblem } from './receiver/registration.js'
export { terminalComparison } from './receiver/envelope.js'
export type {
  IncomingDelivery,
  PayloadShape,
  ReceivedEvent,
  ReceiverAnswer,
  ReceiverAuth,
  ReceiverLimits,
  ReceiverLogEntry,
  Registration,
  RegistrationLookup,
  WebhookReceiver,
  WebhookReceiverOptions,
} from './receiver/types.js'
export { createSweeper, type Sweepable, type Sweeper, type SweeperOptions } from './sweeper.js'
export { every, type Every } from './every.js'
export { redactUrl, sinkMessageId, type Sink, type SinkMessage, type SinkOutcome } from './sink.js'
export {
  createRelay,
  type Relay,
  type RelayBacklog,
  type RelayOptions,
  type RelaySource,
  type RelayStatus,
} from './relay.js'
export { relayBody, relayMessage, type RelayEvent } from './relay-message.js'
export { httpSink, type HttpSinkOptions } from './http-sink.js'
export { WebhookError, type WebhookErrorCode } from './errors.js'
export { createWebhookSender } from './sender/sender.js'
export {
  activityRecord,
  fireActivity,
  redactedUrl,
  type FireFacts,
  type FireLogStore,
  type FireRecord,
} from './sender/fire-log.js'
export { DEFAULT_COALESCE_CLASSES } from './sender/options.js'
export { backoffSeconds, parseRetryAfter } from './sender/retry.js'
export { checkDeliveryReport, type CheckedDeliveryReport } from './sender/delivery-report.js'
export { MUTATING_TASK_TYPES, refuseBearerForMutatingTask } from './sender/registration.js'
export type {
  A2AVersion,
  CoalesceClass,
  DeliveryReport,
  LegacyAuthentication,
  MediaBuyWebhooks,
  MediaBuyWebhooksInit,
  NotificationConfigInput,
  NotifyOptions,
  PushNotificationConfigInput,
  RetryOptions,
  SenderLogEntry,
  SubscriberEvent,
  SubscriberRegistration,
  TaskEvent,
  TaskPushNotificationConfigInput,
  TaskWebhooks,
  TaskWebhooksInit,
  WebhookRegistration,
  WebhookSender,
  WebhookSenderOptions,
} from './sender/types.js'
