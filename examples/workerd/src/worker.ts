/**
 * An AdCP webhook receiver on workerd (Cloudflare's open-source Workers runtime): the worker hands every request
 * to one Durable Object, which verifies the RFC 9421 signature against the seller keys (the SELLER_JWKS text
 * binding) and deduplicates in its own transactional storage (on disk under DATA_DIR here; in Cloudflare, the
 * object's storage). Answers as the reference receiver: 200 accepted/duplicate, 401, 409, 413, 415.
 */
import { jwksResolver, type Jwks } from '@adwire/http-signatures'
import { createWebhookReceiver, type WebhookReceiver } from '@adwire/webhooks'
import { DurableClaimStore, DurableConvergenceStore, DurableReplayStore, type Storage } from './do-stores.js'

interface Env {
  SELLER_JWKS: string
  RECEIVER: {
    idFromName(name: string): unknown
    get(id: unknown): { fetch(request: Request): Promise<Response> }
  }
}

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    return env.RECEIVER.get(env.RECEIVER.idFromName('adcp')).fetch(request)
  },
}

export class Receiver {
  readonly #receiver: WebhookReceiver

  constructor(state: { storage: Storage }, env: Env) {
    const keys = jwksResolver(JSON.parse(env.SELLER_JWKS) as Jwks)
    this.#receiver = createWebhookReceiver({
      registration: (request) =>
        new URL(request.url).pathname === '/webhooks/adcp'
          ? { id: 'adcp', auth: { mode: 'rfc9421', keys }, shape: 'mcp' }
          : undefined,
      claims: new DurableClaimStore(state.storage),
      convergence: new DurableConvergenceStore(state.storage),
      replayStore: new DurableReplayStore(state.storage),
      // Acknowledged (200) only after this resolves: put the event somewhere durable (a queue, a table) here.
      publish: async (event) => {
        console.log(
          JSON.stringify({ published: event.idempotencyKey, task: event.taskId, status: event.status }),
        )
      },
    })
  }

  fetch(request: Request): Promise<Response> {
    return this.#receiver.handle(request)
  }
}
