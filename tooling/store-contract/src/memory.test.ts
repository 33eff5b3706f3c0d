import { MemoryReplayStore } from '@adwire/http-signatures'
import { MemoryClaimStore, MemoryConvergenceStore, MemoryOutboxStore } from '@adwire/webhooks'
import { describeSenderFinalRules, describeStoreContract } from './index.js'

// The in-memory reference implementations pass the same contract as the durable stores.
describeStoreContract('memory', ['claims', 'convergence', 'outbox', 'replay'], async () => ({
  claims: new MemoryClaimStore(),
  convergence: new MemoryConvergenceStore(),
  outbox: new MemoryOutboxStore(),
  replay: new MemoryReplayStore(),
}))

// One MemoryOutboxStore behind every handle: a "restart" is a new sender on the same store object.
describeSenderFinalRules('memory', async () => {
  const outbox = new MemoryOutboxStore()
  return { outbox, peer: outbox, restart: async () => outbox, close: async () => {} }
})
