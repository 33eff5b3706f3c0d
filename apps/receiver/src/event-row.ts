/**
 * A published delivery as the receiver stores it, and what is logged about its recording: shared by the
 * event loop's writer and the inbox worker's (db/inbox-writer.ts).
 */
import type { ReceivedEvent } from '@adwire/webhooks'
import type { NewEvent, RecordedEvent } from './db/types.js'

const UTF8 = new TextDecoder()

/** The row of a published event (`forward`: whether the relay will forward it). */
export function eventRow(event: Omit<ReceivedEvent, 'payload' | 'data'>, forward: boolean): NewEvent {
  return {
    registrationId: event.registrationId,
    sender: event.sender,
    idempotencyKey: event.idempotencyKey,
    ...(event.operationId ? { operationId: event.operationId } : {}),
    ...(event.taskId ? { taskId: event.taskId } : {}),
    ...(event.taskType ? { taskType: event.taskType } : {}),
    ...(event.status ? { status: event.status } : {}),
    terminal: event.terminal,
    receivedAt: event.receivedAt,
    payload: UTF8.decode(event.body),
    forward,
    takeover: event.takeover,
  }
}

/** The log line a recording calls for, if any. */
export function recordedLog(
  event: Pick<ReceivedEvent, 'registrationId' | 'idempotencyKey'>,
  recorded: RecordedEvent,
): Record<string, unknown> | undefined {
  // The previous owner stored it and died before acknowledging: the same publication, now acknowledged.
  if (recorded.recovered)
    return {
      recovered: 'unacknowledged_publication',
      registration: event.registrationId,
      key: event.idempotencyKey,
    }
  if (recorded.publications > 1)
    return { alarm: 'published_twice', registration: event.registrationId, key: event.idempotencyKey }
  return undefined
}
