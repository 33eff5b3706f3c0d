/**
 * What the relay publishes of an accepted event: the JSON body (the one an HTTP downstream has always
 * received), the routing headers and the stable message id.
 */
import { sinkMessageId, type SinkMessage } from './sink.js'

/** One accepted event leased for publication, as the store hands it to the relay. */
export interface RelayEvent {
  /** The store's position of the event (its queue key). */
  readonly seq: number
  /** The lease's fence: every later call about this lease carries it. */
  readonly fence: string
  /** Failed publications before this one. */
  readonly attempts: number
  readonly registrationId: string
  readonly sender: string
  readonly idempotencyKey: string
  readonly operationId: string | null
  readonly taskId: string | null
  readonly taskType: string | null
  readonly status: string | null
  readonly terminal: boolean
  /** Unix seconds. */
  readonly receivedAt: number
  /** The webhook's payload, JSON text. */
  readonly payload: string
}

/**
 * The JSON body of a relayed event (what an HTTP downstream receives, and every broker message's body).
 *
 * @example
 * JSON.stringify(relayBody(event)) // {"registration_id":"rg_…","sender":"…","idempotency_key":"…",…,"payload":{…}}
 */
export function relayBody(event: Omit<RelayEvent, 'seq' | 'fence' | 'attempts'>) {
  return {
    registration_id: event.registrationId,
    sender: event.sender,
    idempotency_key: event.idempotencyKey,
    operation_id: event.operationId,
    task_id: event.taskId,
    task_type: event.taskType,
    status: event.status,
    terminal: event.terminal,
    received_at: new Date(Math.round(event.receivedAt * 1000)).toISOString(),
    payload: JSON.parse(event.payload) as unknown,
  }
}

/**
 * The sink message of an event: id {@link sinkMessageId}(sender, key), the {@link relayBody} as JSON, and the
 * routing fields `registration_id`, `task_type`, `status` as headers (those present).
 *
 * @example
 * const message = await relayMessage(event) // { id: 'q3v…', body: '{"registration_id":…}', headers: { … } }
 */
export async function relayMessage(event: RelayEvent): Promise<SinkMessage> {
  const headers: Record<string, string> = { registration_id: event.registrationId }
  if (event.taskType !== null) headers.task_type = event.taskType
  if (event.status !== null) headers.status = event.status
  return {
    id: await sinkMessageId(event.sender, event.idempotencyKey),
    body: JSON.stringify(relayBody(event)),
    headers,
  }
}
