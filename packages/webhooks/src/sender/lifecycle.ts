/**
 * The AdCP firing rules as helpers (AdCP webhooks.mdx "When webhooks fire"): no webhook when the initial
 * response is terminal; one per later status change; for a media buy reaching completed, canceled or
 * rejected, the queued impairments first, then the `final` delivery report, then nothing more.
 *
 * The order holds at any worker concurrency and across senders sharing one outbox: the final report is an
 * outbox barrier, never leased while an earlier entry of its buy to the same URL (an impairment being retried,
 * say) is pending; entries to other URLs never hold it back (a push URL answering errors does not delay the
 * final report to a healthy reporting URL). "Nothing more" is durable: the outbox records the buy as closed with its final report (or on
 * `finish` without a reporting webhook) and refuses later events of the buy, after a restart too.
 *
 * Task trackers hold the last status in memory. After a restart, create them again with the status the
 * seller's own task or media buy store holds (a terminal one refuses everything).
 */
import { TaskStatusSchema, TERMINAL_TASK_STATUSES } from '@adwire/schemas'
import { WebhookError } from '../errors.js'
import { DELIVERY_TASK_TYPE } from './delivery-report.js'
import type {
  DeliveryReport,
  MediaBuyWebhooks,
  MediaBuyWebhooksInit,
  NotifyOptions,
  TaskEvent,
  TaskWebhooks,
  TaskWebhooksInit,
  WebhookRegistration,
} from './types.js'

/** What the trackers need from the sender. */
export interface SenderCore {
  notify(registration: WebhookRegistration, event: TaskEvent, options?: NotifyOptions): Promise<string>
  /**
   * Flushes the buy's queued impairments and closes it durably (refusing anything more for it). Resolves
   * with false when it was closed already.
   */
  closeMediaBuy(mediaBuyId: string): Promise<boolean>
  /** Records the buy as terminal on the caller's word (its status): refused from now on. */
  markClosed(mediaBuyId: string): void
  /** Whether the buy is closed (the cache, checked against the outbox where it may be stale). */
  isClosed(mediaBuyId: string): Promise<boolean>
}

const invalid = (message: string) => new WebhookError('INVALID_REQUEST', message)
const BUY_TERMINAL = new Set(['completed', 'canceled', 'rejected'])

function checkStatus(status: unknown, what: string): string {
  if (!TaskStatusSchema.safeParse(status).success)
    throw invalid(`${what} "${String(status)}" is not a task status (${TaskStatusSchema.options.join(', ')})`)
  return status as string
}

/** Runs calls one after another, in call order, whatever each one's outcome. */
function serial() {
  let tail: Promise<unknown> = Promise.resolve()
  return <T>(task: () => Promise<T>): Promise<T> => {
    const result = tail.then(task, task)
    tail = result.catch(() => undefined)
    return result
  }
}

/** @see WebhookSender.task */
export function taskWebhooks(
  core: SenderCore,
  registration: WebhookRegistration,
  init: TaskWebhooksInit,
): TaskWebhooks {
  if (typeof init?.task_id !== 'string' || init.task_id === '') throw invalid('task_id is required')
  let status = checkStatus(init.status, 'the initial status')
  const initiallyTerminal = TERMINAL_TASK_STATUSES.has(status)
  const run = serial()

  return {
    get status() {
      return status
    },
    get terminal() {
      return TERMINAL_TASK_STATUSES.has(status)
    },
    update(next, details = {}) {
      return run(async () => {
        if (TERMINAL_TASK_STATUSES.has(status))
          throw new WebhookError(
            'webhook_after_terminal',
            initiallyTerminal
              ? `task ${init.task_id} answered "${status}" inline: no webhook is sent for a terminal initial response`
              : `task ${init.task_id} already reported "${status}": nothing more fires for it`,
          )
        checkStatus(next, 'status')
        if (next === status) return undefined
        const key = await core.notify(
          registration,
          {
            ...details,
            task_id: init.task_id,
            task_type: init.task_type,
            status: next,
            ...(init.context_id !== undefined ? { context_id: init.context_id } : {}),
          },
          init.mediaBuyId !== undefined ? { mediaBuyId: init.mediaBuyId } : {},
        )
        status = next
        return key
      })
    },
  }
}

function reportEvent(mediaBuyId: string, report: DeliveryReport): TaskEvent {
  if (typeof report?.result !== 'object' || report.result === null)
    throw invalid('a delivery report needs a result')
  const result = report.result
  const suffix =
    typeof result.sequence_number === 'number' ? result.sequence_number : result.notification_type
  return {
    task_id: report.task_id ?? `delivery_${mediaBuyId}_${String(suffix)}`,
    task_type: DELIVERY_TASK_TYPE,
    status: 'completed',
    result,
    ...(report.message !== undefined ? { message: report.message } : {}),
    ...(report.timestamp !== undefined ? { timestamp: report.timestamp } : {}),
  }
}

/** @see WebhookSender.mediaBuy */
export function mediaBuyWebhooks(core: SenderCore, init: MediaBuyWebhooksInit): MediaBuyWebhooks {
  const { mediaBuyId } = init ?? {}
  if (typeof mediaBuyId !== 'string' || mediaBuyId === '') throw invalid('mediaBuyId is required')
  if (init.status !== undefined && BUY_TERMINAL.has(init.status)) core.markClosed(mediaBuyId)
  const run = serial()
  // With an owner, every fire of the buy is noted in the sender's fire log for its webhook_activity.
  const fireOf = (notificationType: string, sequence?: unknown) =>
    init.owner === undefined
      ? {}
      : {
          fire: {
            owner: init.owner,
            notification_type: notificationType,
            media_buy_id: mediaBuyId,
            ...(typeof sequence === 'number' ? { sequence_number: sequence } : {}),
          },
        }
  const reportFire = (event: TaskEvent) =>
    fireOf(String(event.result?.notification_type), event.result?.sequence_number)
  const registrationOf = (which: 'notifications' | 'reporting') => {
    const registration = init[which]
    if (!registration) throw invalid(`media buy ${mediaBuyId} has no ${which} registration`)
    return registration
  }
  return {
    impairment(event, coalesce) {
      return run(() =>
        core.notify(registrationOf('notifications'), event, {
          coalesce,
          mediaBuyId,
          ...fireOf(String(event.result?.notification_type ?? 'impairment')),
        }),
      )
    },
    report(report) {
      return run(async () => {
        const event = reportEvent(mediaBuyId, report)
        if (event.result?.notification_type === 'final')
          throw invalid('the final delivery report is sent by finish(), when the buy terminates')
        return core.notify(registrationOf('reporting'), event, { mediaBuyId, ...reportFire(event) })
      })
    },
    finish(status, finalReport) {
      return run(async () => {
        if (!BUY_TERMINAL.has(status))
          throw invalid(`finish() takes completed, canceled or rejected, not "${String(status)}"`)
        if (await core.isClosed(mediaBuyId))
          throw new WebhookError(
            'webhook_after_final',
            `media buy ${mediaBuyId} already had its final delivery report`,
          )
        if (!init.reporting) {
          if (!(await core.closeMediaBuy(mediaBuyId)))
            throw new WebhookError(
              'webhook_after_final',
              `media buy ${mediaBuyId} already had its final delivery report`,
            )
          return undefined
        }
        const event = reportEvent(mediaBuyId, finalReport)
        if (event.result?.notification_type !== 'final')
          throw invalid(`the final delivery report needs notification_type "final"`)
        return core.notify(init.reporting, event, { mediaBuyId, ...reportFire(event) })
      })
    },
  }
}
