import { MemoryReplayStore } from '@adwire/http-signatures'
import {
  createMemoryInbox,
  MemoryClaimStore,
  MemoryConvergenceStore,
  MemoryOutboxStore,
  type ReceivedEvent,
} from '@adwire/webhooks'
import { describeSenderFinalRules, describeStoreContract } from './index.js'

// The in-memory reference implementations pass the same contract as the durable stores.
describeStoreContract('memory', ['claims', 'convergence', 'outbox', 'replay', 'inbox'], async () => {
  const claims = new MemoryClaimStore()
  const convergence = new MemoryConvergenceStore()
  const replay = new MemoryReplayStore()
  const events: ReceivedEvent[] = []
  const keys = (scope: string, which: (event: ReceivedEvent) => boolean) =>
    events
      .filter((event) => event.sender === scope && which(event))
      .map((event) => event.idempotencyKey)
      .sort()
  return {
    claims,
    convergence,
    outbox: new MemoryOutboxStore(),
    replay,
    // Memory drops expired nonces as it goes: what it stores is what is live.
    async replayRows(keyid, now) {
      const live = replay.liveCount(keyid, now)
      return { stored: live, live }
    },
    async openInbox(fail) {
      const write = (event: ReceivedEvent) => {
        if (fail(event)) throw new Error('the writer failed')
        events.push(event)
      }
      return {
        inbox: createMemoryInbox({ claims, convergence, replay, write }),
        published: async (scope) => keys(scope, () => true),
        reemitted: async (scope) => keys(scope, (event) => event.reemission),
      }
    },
  }
})

// One MemoryOutboxStore behind every handle: a "restart" is a new sender on the same store object.
describeSenderFinalRules('memory', async () => {
  const outbox = new MemoryOutboxStore()
  return { outbox, peer: outbox, restart: async () => outbox, close: async () => {} }
})
