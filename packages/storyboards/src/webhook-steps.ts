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
  for (;;) {
    seen = session.deliveries(trigger).filter((delivery) => matches(delivery, filter))
    if (seen.length >= minDeliveries || performance.now() > until) break
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
      const keys = new Set(seen.map((delivery) => delivery.idempotencyKey))
      results.push(
        check(
          'retry_deliveries',
          `at least ${minDeliveries} deliveries (the receiver answered the first ones with 5xx)`,
          seen.length >= minDeliveries,
          seen.length >= minDeliveries ? undefined : `insufficient_retries: ${seen.length} delivery(ies)`,
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
      const events = new Set(seen.map((delivery) => delivery.idempotencyKey)).size
      results.push(
        check(
          'max_deliveries_per_logical_event',
          `at most ${max} logical event(s)`,
          events <= max,
          events <= max ? undefined : `duplicate_webhook_on_replay: ${events} events`,
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
