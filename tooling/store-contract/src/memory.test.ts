import { MemoryReplayStore } from '@adwire/http-signatures'
import { MemoryClaimStore, MemoryConvergenceStore, MemoryOutboxStore } from '@adwire/webhooks'
import { describeStoreContract } from './index.js'

// The in-memory reference implementations pass the same contract as the durable stores.
describeStoreContract('memory', ['claims', 'convergence', 'outbox', 'replay'], async () => ({
  claims: new MemoryClaimStore(),
  convergence: new MemoryConvergenceStore(),
  outbox: new MemoryOutboxStore(),
  replay: new MemoryReplayStore(),
}))
