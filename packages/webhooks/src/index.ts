export type * from './stores.js'
export { MemoryClaimStore, MemoryConvergenceStore, MemoryOutboxStore } from './memory-stores.js'
export { createWebhookReceiver } from './receiver/receiver.js'
export type {
  PayloadShape,
  ReceivedEvent,
  ReceiverAuth,
  ReceiverLimits,
  ReceiverLogEntry,
  Registration,
  WebhookReceiver,
  WebhookReceiverOptions,
} from './receiver/types.js'
export { createSweeper, type Sweepable, type Sweeper, type SweeperOptions } from './sweeper.js'
