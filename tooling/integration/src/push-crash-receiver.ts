/**
 * The buyer's side of the push crash test: the reference receiver (apps/receiver, in this process, on its own
 * SQLite file) registered for every push the sales agent sends, behind a proxy that sees every delivery on the
 * wire. Each push is mapped to the state change it announces (its "event"), so the test can count, per change,
 * the idempotency_keys the agent sent and the events the receiver published.
 */
import path from 'node:path'
import { parseEnv, startReceiver, type NewEvent, type RunningReceiver } from '@adwire/app-receiver'
import { ADMIN_TOKEN, api, events } from './receiver-support.js'
import { startHoldingProxy, type HoldingProxy } from './sales-agent-support.js'

/** The secret of the buys' reporting_webhook (legacy HMAC-SHA256, as a reporting_webhook asks). */
export const REPORTING_SECRET = 'crash-reporting-hmac-secret-0123456789abcdef'

/** What a push announces. */
export type PushKind = 'creative' | 'account' | 'task' | 'impairment' | 'report' | 'final' | 'other'

/** The state change a push announces: `id` names it (the same for every push of that change). */
export interface PushEvent {
  readonly kind: PushKind
  readonly id: string
  /** The push_notification_config operation_id (task pushes). */
  readonly operationId?: string
  /** The task a task push is for. */
  readonly taskId?: string
}

const REPORT_TYPES = new Set(['scheduled', 'final', 'delayed', 'adjusted', 'window_update'])

/* eslint-disable @typescript-eslint/no-explicit-any -- payloads are read freely */
/**
 * The change a push body announces:
 * - creative.status_changed: the creative and the step marker the test put in its reason (`reason_detail`);
 * - account.status_changed: the account and its transition (each transition once per account in the test);
 * - an impairment (to the buy's push_notification_config): the buy, the creative and its step marker;
 * - a delivery report: the buy and its sequence number (`final` for the final report);
 * - a task status push: the task and the status.
 */
export function eventOf(body: string): PushEvent {
  let payload: any
  try {
    payload = JSON.parse(body)
  } catch {
    return { kind: 'other', id: `other:unparsable:${body.slice(0, 80)}` }
  }
  if (payload.notification_type === 'creative.status_changed')
    return { kind: 'creative', id: `creative:${payload.creative_id}:${payload.reason_detail ?? '-'}` }
  if (payload.notification_type === 'account.status_changed')
    return {
      kind: 'account',
      id: `account:${payload.account_id}:${payload.transition?.from}>${payload.transition?.to}`,
    }
  if (typeof payload.task_id === 'string' && typeof payload.status === 'string') {
    const result = payload.result ?? {}
    if (result.notification_type === 'impairment')
      return {
        kind: 'impairment',
        id: `impairment:${result.media_buy_id}:${result.impairment?.resource_id}:${result.impairment?.reason ?? '-'}`,
      }
    if (REPORT_TYPES.has(result.notification_type)) {
      const buy = result.media_buy_deliveries?.[0]?.media_buy_id
      return result.notification_type === 'final'
        ? { kind: 'final', id: `final:${buy}` }
        : { kind: 'report', id: `report:${buy}:${result.sequence_number}` }
    }
    return {
      kind: 'task',
      id: `task:${payload.task_id}:${payload.status}`,
      taskId: payload.task_id,
      ...(typeof payload.operation_id === 'string' ? { operationId: payload.operation_id } : {}),
    }
  }
  return { kind: 'other', id: `other:${payload.notification_type ?? 'unknown'}:${payload.idempotency_key}` }
}

/** A final report's sequence number, if the body is one. */
export function finalSequence(body: string): number | undefined {
  const result = (JSON.parse(body) as any).result
  return result?.notification_type === 'final' && typeof result.sequence_number === 'number'
    ? result.sequence_number
    : undefined
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** One push as seen on the wire or published. */
export interface SeenPush {
  readonly key: string
  readonly body: string
  readonly event: PushEvent
}

const keyOf = (body: string): string => {
  try {
    return String((JSON.parse(body) as { idempotency_key?: unknown }).idempotency_key ?? '')
  } catch {
    return ''
  }
}

/**
 * @example
 * const buyer = await BuyerSide.start(directory, () => agent.now())
 * await buyer.register(jwks)
 * buyer.hooks.creative // the URL for the creative account's notification_configs
 */
export class BuyerSide {
  readonly hooks: Record<'creative' | 'account' | 'task' | 'reports', string> = {
    creative: '',
    account: '',
    task: '',
    reports: '',
  }
  readonly #ids: string[] = []
  /** Published events by idempotency_key (a takeover's second write of one key counts once). */
  readonly #published = new Map<string, NewEvent>()
  /** The ids of the events published so far. */
  readonly #events = new Set<string>()

  private constructor(
    readonly receiver: RunningReceiver,
    readonly proxy: HoldingProxy,
  ) {}

  /** Keys the receiver answered as stale: a task's non-terminal status that came after its terminal one. */
  readonly stale = new Set<string>()
  /** Deliveries the receiver neither published nor took as duplicates, by outcome (rejected, conflict…). */
  readonly refused = new Map<string, number>()

  #answered(outcome: string, key: string | undefined): void {
    if (outcome === 'stale' && key) this.stale.add(key)
    else this.refused.set(outcome, (this.refused.get(outcome) ?? 0) + 1)
  }

  #record(event: NewEvent): void {
    this.#published.set(event.idempotencyKey, event)
    this.#events.add(eventOf(event.payload).id)
  }

  /** Starts the receiver on `directory`/receiver.sqlite with the agent's clock, and the proxy before it. */
  static async start(directory: string, now: () => number): Promise<BuyerSide> {
    const target: { url?: string } = {}
    const proxy = await startHoldingProxy(() => new URL(target.url!))
    const side: { instance?: BuyerSide } = {}
    const receiver = await startReceiver(
      parseEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: `sqlite:${path.join(directory, 'receiver.sqlite')}`,
        ADMIN_TOKEN,
        PUBLIC_URL: proxy.url,
        ALLOW_INSECURE_KEY_URLS: '1',
      }),
      {
        now,
        log: (entry) => {
          const delivery = entry.delivery as { outcome?: string; idempotencyKey?: string } | undefined
          if (delivery?.outcome) side.instance!.#answered(delivery.outcome, delivery.idempotencyKey)
        },
        database: (db) => ({
          ...db,
          async recordEvent(event, transaction) {
            const stored = await db.recordEvent(event, transaction)
            side.instance!.#record(event)
            return stored
          },
          async recordEvents(list, transaction) {
            const stored = await db.recordEvents(list, transaction)
            for (const event of list) side.instance!.#record(event)
            return stored
          },
        }),
      },
    )
    target.url = receiver.url
    side.instance = new BuyerSide(receiver, proxy)
    return side.instance
  }

  /** Registers the four webhooks: RFC 9421 with the agent's keys inline, HMAC for the reporting webhook. */
  async register(jwks: unknown): Promise<void> {
    const register = async (name: keyof BuyerSide['hooks'], body: Record<string, unknown>) => {
      const created = await api(this.receiver.url, '/api/registrations', { label: name, ...body })
      if (created.status !== 201) throw new Error(`registration ${name}: ${JSON.stringify(created.body)}`)
      this.hooks[name] = created.body.url as string
      this.#ids.push(created.body.id as string)
    }
    await register('creative', { auth: 'rfc9421', jwks, shape: 'creative-status-changed' })
    await register('account', { auth: 'rfc9421', jwks, shape: 'account-status-changed' })
    await register('task', { auth: 'rfc9421', jwks, shape: 'mcp' })
    await register('reports', { auth: 'hmac', secret: REPORTING_SECRET, shape: 'mcp' })
  }

  /** Every push the receiver published, one per idempotency_key. */
  published(): SeenPush[] {
    return [...this.#published.values()].map((event) => ({
      key: event.idempotencyKey,
      body: event.payload,
      event: eventOf(event.payload),
    }))
  }

  /** Whether the receiver published a push of the event `id`. */
  hasPublished(id: string): boolean {
    return this.#events.has(id)
  }

  /** Every delivery attempt that reached the receiver through the proxy (retries of a key included). */
  wire(): SeenPush[] {
    return this.proxy.answered.map((body) => ({ key: keyOf(body), body, event: eventOf(body) }))
  }

  /** How many deliveries the receiver has answered so far (to tell when the agent has gone quiet). */
  deliveries(): number {
    return this.proxy.answered.length
  }

  /**
   * The receiver's own account of what it published (its events API): idempotency_key → publications, over
   * the four registrations.
   */
  async listed(): Promise<Map<string, number>> {
    const listed = new Map<string, number>()
    for (const id of this.#ids)
      for (const event of await events(this.receiver.url, id))
        listed.set(event.idempotency_key, (listed.get(event.idempotency_key) ?? 0) + event.publications)
    return listed
  }

  async close(): Promise<void> {
    await this.receiver.close()
    await this.proxy.close()
  }
}
