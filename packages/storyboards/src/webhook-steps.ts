/**
 * The webhook-assertion steps (storyboard-schema.yaml, "Webhook-assertion steps"): `expect_webhook`,
 * `expect_webhook_retry_keys_stable`, `expect_webhook_signature_valid`, graded on what the run's receiver saw.
 */
import type { StepResult, ValidationResult } from './result.js'
import type { RunContext } from './run-context.js'
import { substitute } from './substitute.js'
import type { Step } from './types.js'
import type { WebhookDelivery } from './webhook-receiver.js'
import { resolvePath } from './path.js'
import { jsonEqual } from './checks.js'

/** The webhook-assertion task names. */
export const WEBHOOK_TASKS: ReadonlySet<string> = new Set([
  'expect_webhook',
  'expect_webhook_retry_keys_stable',
  'expect_webhook_signature_valid',
])

const IDEMPOTENCY_KEY = /^[A-Za-z0-9_.:-]{16,255}$/

const check = (name: string, description: string, passed: boolean, detail?: string): ValidationResult => ({
  check: name,
  description,
  passed,
  severity: 'required',
  ...(detail ? { detail } : {}),
})

function matches(delivery: WebhookDelivery, filter: Record<string, unknown> | undefined): boolean {
  return Object.entries(filter ?? {}).every(([path, expected]) =>
    jsonEqual(resolvePath(delivery.body, path), expected),
  )
}

/**
 * The logical event a delivery notifies: its payload `status` (a task status notification), else its
 * `notification_type` (a delivery report). One operation legitimately notifies several events (`working`, then
 * `completed`), each with its own idempotency_key; the deliveries of one event share a key, across retries and
 * across an idempotent replay of the request.
 */
function logicalEvent(delivery: WebhookDelivery): string {
  const body = delivery.body as Record<string, unknown> | undefined
  const status = body?.status ?? (body?.result as Record<string, unknown> | undefined)?.notification_type
  return typeof status === 'string' ? status : 'unlabelled'
}

const ofEvent = (deliveries: WebhookDelivery[], event: string) =>
  deliveries.filter((delivery) => logicalEvent(delivery) === event)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Runs one webhook-assertion step.
 * @example await runWebhookStep(step, 'expect_webhook', run)
 */
export async function runWebhookStep(
  step: Step,
  task: string,
  run: RunContext,
): Promise<Omit<StepResult, 'phase_id' | 'step_id' | 'duration_ms'>> {
  const session = run.env.webhooks
  if (!session) {
    return {
      task,
      status: 'skipped',
      skip: {
        reason: 'unsatisfied_contract',
        detail: 'the run hosts no webhook receiver (webhook_receiver_runner)',
      },
      validations: [],
    }
  }
  const trigger = step.triggered_by
  if (!trigger)
    return {
      task,
      status: 'failed',
      validations: [check('triggered_by', 'webhook steps name their trigger', false, 'no triggered_by')],
    }
  if (run.outcomes.get(trigger) !== 'passed') {
    return {
      task,
      status: 'skipped',
      skip: { reason: 'prerequisite_failed', detail: `step ${trigger} did not pass` },
      validations: [],
    }
  }
  const filter = substitute(step.filter?.body, run.scope) as Record<string, unknown> | undefined
  const retry = task === 'expect_webhook_retry_keys_stable'
  const timeoutMs = Math.min(run.env.stepTimeoutMs, (step.timeout_seconds ?? (retry ? 90 : 30)) * 1000)
  const minDeliveries = retry
    ? Number(
        step.expect_min_deliveries ??
          ((step.retry_trigger as { count?: number } | undefined)?.count ?? 3) + 1,
      )
    : 1
  const until = performance.now() + timeoutMs
  let seen: WebhookDelivery[]
  // The retried event is the first one delivered; the operation's other status notifications are other events.
  const retried = () => (retry && seen.length ? ofEvent(seen, logicalEvent(seen[0]!)) : seen)
  for (;;) {
    seen = session.deliveries(trigger).filter((delivery) => matches(delivery, filter))
    if (retried().length >= minDeliveries || performance.now() > until) break
    await sleep(25)
  }
  const results: ValidationResult[] = []
  results.push(
    check(
      'webhook_received',
      `a webhook for ${trigger} matching the filter arrives within ${timeoutMs} ms`,
      seen.length > 0,
      seen.length
        ? undefined
        : `no_webhook_received: ${session.deliveries(trigger).length} delivery(ies) on the step URL, none matching ${JSON.stringify(filter ?? {})}`,
    ),
  )
  if (seen.length) {
    const first = seen[0]!
    if (step.expect_idempotency_key !== false) {
      results.push(
        check(
          'idempotency_key',
          'the webhook carries a valid idempotency_key',
          first.idempotencyKey !== undefined && IDEMPOTENCY_KEY.test(first.idempotencyKey),
          first.idempotencyKey === undefined
            ? 'missing_idempotency_key'
            : IDEMPOTENCY_KEY.test(first.idempotencyKey)
              ? undefined
              : `invalid_idempotency_key_format: ${first.idempotencyKey}`,
        ),
      )
    }
    const schema = step.webhook_payload_schema_ref as string | undefined
    if (schema && run.schemas?.has(schema)) {
      const errors = run.schemas.errors(schema, first.body)
      results.push(
        check(
          'webhook_payload_schema',
          `the payload matches ${schema}`,
          errors.length === 0,
          errors.length ? `schema_violation: ${errors.slice(0, 6).join('; ')}` : undefined,
        ),
      )
    }
    const unsigned = seen.find((delivery) => delivery.signatureProblem !== undefined)
    if (task === 'expect_webhook_signature_valid' || retry) {
      results.push(
        check(
          'webhook_signature',
          "every delivery carries a valid RFC 9421 webhook signature (the agent's published keys)",
          !unsigned,
          unsigned ? `signature_invalid: ${unsigned.signatureProblem}` : undefined,
        ),
      )
    }
    if (retry) {
      const event = retried()
      const keys = new Set(event.map((delivery) => delivery.idempotencyKey))
      results.push(
        check(
          'retry_deliveries',
          `at least ${minDeliveries} deliveries of one event (the receiver answered the first ones with 5xx)`,
          event.length >= minDeliveries,
          event.length >= minDeliveries
            ? undefined
            : `insufficient_retries: ${event.length} delivery(ies) of the ${logicalEvent(first)} event`,
        ),
      )
      results.push(
        check(
          'idempotency_key_stable',
          'every retry carries the byte-identical idempotency_key',
          keys.size === 1,
          keys.size === 1 ? undefined : `idempotency_key_rotated: ${[...keys].join(', ')}`,
        ),
      )
    }
    const max = step.expect_max_deliveries_per_logical_event as number | undefined
    if (max !== undefined) {
      const counts = [...new Set(seen.map(logicalEvent))].map((event) => ({
        event,
        keys: new Set(ofEvent(seen, event).map((delivery) => delivery.idempotencyKey)).size,
      }))
      const over = counts.filter(({ keys }) => keys > max)
      results.push(
        check(
          'max_deliveries_per_logical_event',
          `at most ${max} delivery key(s) per logical event (status notification) of the operation`,
          over.length === 0,
          over.length === 0
            ? undefined
            : `duplicate_webhook_on_replay: ${over.map(({ event, keys }) => `${keys} ${event} events`).join(', ')}`,
        ),
      )
    }
  }
  const failed = results.some((result) => !result.passed)
  return {
    task,
    status: failed ? 'failed' : 'passed',
    validations: results,
    response: seen.map((delivery) => delivery.body),
  }
}
