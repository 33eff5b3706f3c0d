/** The run's own webhook receiver: what the webhook-assertion steps observe. */
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { MemoryReplayStore, type KeySource } from '@adwire/http-signatures'
import { createWebhookReceiver, MemoryClaimStore, MemoryConvergenceStore } from '@adwire/webhooks'

/** One delivery the receiver saw. */
export interface WebhookDelivery {
  /** The step whose per-step URL it arrived on. */
  stepId: string
  receivedAt: number
  /** The HTTP status the receiver answered. */
  status: number
  /** Parsed JSON body, when it was JSON. */
  body: unknown
  idempotencyKey: string | undefined
  /** The RFC 9421 verdict: undefined when verified, else the webhook_signature_* code or why not. */
  signatureProblem: string | undefined
}

/** A receiver hosted for one run. */
export interface WebhookSession {
  /** `{{runner.webhook_base}}`. */
  readonly base: string
  /** `{{runner.webhook_url:<step_id>}}`. */
  urlFor(stepId: string): string
  /** Deliveries to a step's URL so far. */
  deliveries(stepId: string): readonly WebhookDelivery[]
  /** Answer the first `count` deliveries to a step's URL with `status` (retry checks). */
  failFirst(stepId: string, count: number, status: number): void
  close(): Promise<void>
}

/** Options of {@link startWebhookReceiver}. */
export interface WebhookReceiverOptions {
  /** The seller's public keys (its JWKS or a resolver, e.g. `brandJsonResolver({ agentUrl })`). */
  keys: KeySource
  /** Listen address. Default 127.0.0.1. */
  host?: string
  /** Listen port. Default 0 (any free port). */
  port?: number
  /** The public base URL that reaches this listener (a tunnel or proxy), when the agent is not local. */
  publicBase?: string
}

const readBody = (request: IncomingMessage): Promise<Uint8Array> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    request.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > 1024 * 1024) request.destroy(new Error('webhook body over 1 MiB'))
      else chunks.push(chunk)
    })
    request.on('end', () => resolve(new Uint8Array(Buffer.concat(chunks))))
    request.on('error', reject)
  })

/**
 * Hosts the runner's webhook receiver (test-kits/webhook-receiver-runner.yaml): per-step URLs
 * `<base>/step/<step_id>/<capture_id>`, RFC 9421 verification of every delivery against the seller's keys with a
 * run-scoped replay store (@adwire/webhooks, 3.1 duplicate semantics), and the 5xx-then-2xx retry trigger.
 * @example
 * const webhooks = await startWebhookReceiver({ keys: brandJsonResolver({ agentUrl }) })
 * await runStoryboards({ agentUrl, webhooks, storyboards: ['webhook_emission'] })
 * await webhooks.close()
 */
export async function startWebhookReceiver(options: WebhookReceiverOptions): Promise<WebhookSession> {
  const captures = new Map<string, string>() // capture id → step id
  const stepCaptures = new Map<string, string>()
  const seen = new Map<string, WebhookDelivery[]>()
  const failing = new Map<string, { remaining: number; status: number }>()
  const receiver = createWebhookReceiver({
    registration: (request) => {
      const capture = new URL(request.url).pathname.split('/')[3]
      return capture && captures.has(capture)
        ? { id: capture, auth: { mode: 'rfc9421', keys: options.keys } }
        : undefined
    },
    claims: new MemoryClaimStore(),
    convergence: new MemoryConvergenceStore(),
    replayStore: new MemoryReplayStore(),
    protocol: '3.1',
    publish: async () => {},
  })
  const server = createServer((incoming, outgoing) => {
    void (async () => {
      const body = await readBody(incoming)
      const url = `http://${incoming.headers.host ?? '127.0.0.1'}${incoming.url ?? '/'}`
      const [, root, stepId, capture] = new URL(url).pathname.split('/')
      if (
        root !== 'step' ||
        !stepId ||
        !capture ||
        captures.get(capture) !== stepId ||
        incoming.method !== 'POST'
      ) {
        outgoing.writeHead(404).end()
        return
      }
      const headers = new Headers()
      for (const [name, value] of Object.entries(incoming.headers)) {
        if (typeof value === 'string') headers.set(name, value)
        else if (Array.isArray(value)) headers.set(name, value.join(', '))
      }
      let parsed: unknown
      try {
        parsed = JSON.parse(new TextDecoder().decode(body))
      } catch {
        parsed = undefined
      }
      const verdict = await receiver.handle(new Request(url, { method: 'POST', headers, body }))
      const problem =
        verdict.status >= 200 && verdict.status < 300
          ? undefined
          : (((await verdict.json().catch(() => ({}))) as { error?: { code?: string } }).error?.code ??
            `HTTP ${verdict.status}`)
      const failure = failing.get(stepId)
      const status = failure && failure.remaining > 0 ? failure.status : problem ? verdict.status : 200
      if (failure && failure.remaining > 0) failure.remaining--
      const key = (parsed as { idempotency_key?: unknown } | undefined)?.idempotency_key
      const list = seen.get(stepId) ?? []
      list.push({
        stepId,
        receivedAt: Date.now(),
        status,
        body: parsed,
        idempotencyKey: typeof key === 'string' ? key : undefined,
        signatureProblem: problem,
      })
      seen.set(stepId, list)
      outgoing.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ status }))
    })().catch(() => outgoing.writeHead(500).end())
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve())
  })
  const address = server.address() as AddressInfo
  const host = (options.host ?? '127.0.0.1').includes(':')
    ? `[${options.host}]`
    : (options.host ?? '127.0.0.1')
  const base = (options.publicBase ?? `http://${host}:${address.port}`).replace(/\/+$/, '')
  return {
    base,
    urlFor(stepId) {
      let capture = stepCaptures.get(stepId)
      if (!capture) {
        capture = `c${crypto.randomUUID().replace(/-/g, '')}`
        stepCaptures.set(stepId, capture)
        captures.set(capture, stepId)
      }
      return `${base}/step/${encodeURIComponent(stepId)}/${capture}`
    },
    deliveries: (stepId) => seen.get(stepId) ?? [],
    failFirst(stepId, count, status) {
      failing.set(stepId, { remaining: count, status })
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
