import { describe, expect, it } from 'vitest'
import type { EventRecord, FailureRecord, ReceiverDatabase } from './db/types.js'
import { createEventHub, type StreamMessage } from './hub.js'

/** The three reads the hub makes, over arrays the test fills (rows may become visible out of order). */
function fakeDatabase() {
  const events: EventRecord[] = []
  const failures: FailureRecord[] = []
  const after = <T extends { seq: number; registrationId: string }>(
    rows: T[],
    seq: number,
    limit: number,
    id?: string,
  ) =>
    rows
      .filter((row) => row.seq > seq && (id === undefined || row.registrationId === id))
      .sort((a, b) => a.seq - b.seq)
      .slice(0, limit)
  const db = {
    eventsAfter: async (seq: number, limit: number, id?: string) => after(events, seq, limit, id),
    failuresAfter: async (seq: number, limit: number, id?: string) => after(failures, seq, limit, id),
    cursor: async () => ({
      events: Math.max(0, ...events.map((row) => row.seq)),
      failures: Math.max(0, ...failures.map((row) => row.seq)),
    }),
  } as unknown as ReceiverDatabase
  const event = (seq: number, registrationId = 'r1'): EventRecord => ({
    seq,
    registrationId,
    idempotencyKey: `key-${seq}`,
    operationId: 'op',
    taskId: 't',
    taskType: null,
    status: 'working',
    receivedAt: seq,
    publications: 1,
  })
  return { db, events, failures, event }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 30))

describe('event hub', () => {
  it('delivers a row that becomes visible after a higher one, once', async () => {
    const { db, events, event } = fakeDatabase()
    events.push(event(1))
    const hub = createEventHub(db, { pollMs: 10_000 })
    const received: StreamMessage[] = []
    await hub.subscribe({}, (message) => received.push(message))
    events.push(event(3))
    hub.kick()
    await settle()
    events.push(event(2)) // committed late: its number was taken before 3's
    hub.kick()
    await settle()
    hub.kick()
    await settle()
    expect(received.map((message) => message.record.seq)).toEqual([3, 2])
    hub.close()
  })

  it('replays from a cursor, then goes live without sending anything twice', async () => {
    const { db, events, failures, event } = fakeDatabase()
    events.push(event(1), event(2, 'other'), event(3))
    failures.push({ seq: 1, registrationId: 'r1', code: 'webhook_signature_invalid', httpStatus: 401, at: 1 })
    const hub = createEventHub(db, { pollMs: 10_000 })
    const received: string[] = []
    const cursors: string[] = []
    const subscription = await hub.subscribe(
      { registrationId: 'r1', since: { events: 0, failures: 0 } },
      (message, cursor) => {
        received.push(`${message.kind}:${message.record.seq}`)
        cursors.push(`${cursor.events}.${cursor.failures}`)
      },
    )
    expect(received).toEqual(['delivery:1', 'delivery:3', 'failure:1'])
    events.push(event(4))
    hub.kick()
    await settle()
    expect(received).toEqual(['delivery:1', 'delivery:3', 'failure:1', 'delivery:4'])
    expect(cursors.at(-1)).toBe('4.1')
    hub.close()
    await subscription.ended
  })
})

describe('event hub, after everyone left', () => {
  it('starts the next subscriber from now, not from where the last one left', async () => {
    const { db, events, event } = fakeDatabase()
    const hub = createEventHub(db, { pollMs: 10_000 })
    const first = await hub.subscribe({}, () => {})
    first.close()
    events.push(event(1), event(2))
    const received: number[] = []
    await hub.subscribe({}, (message) => received.push(message.record.seq))
    hub.kick()
    await settle()
    events.push(event(3))
    hub.kick()
    await settle()
    expect(received).toEqual([3])
    hub.close()
  })
})
