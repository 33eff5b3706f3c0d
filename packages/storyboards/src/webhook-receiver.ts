/** The run's webhook receiver, as the steps see it. */

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
