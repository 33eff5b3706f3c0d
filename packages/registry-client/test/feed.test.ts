import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  createRegistryClient,
  CursorExpiredError,
  followFeed,
  RegistryError,
  type CursorStore,
  type FeedStreamMessage,
  type RegistryFeedEvent,
} from '../src/index.js'
import { API_KEY, startFakeRegistry, type FakeRegistry } from './fake-registry.js'

let registry: FakeRegistry
beforeAll(async () => {
  registry = await startFakeRegistry()
})
afterAll(() => registry.close())
beforeEach(() => {
  registry.events.length = 0
})

const client = () => createRegistryClient({ baseUrl: registry.url, apiKey: API_KEY })

/** A cursor store in a variable, recording every save. */
function memoryStore(initial: string | null = null): CursorStore & { value: string | null; saves: number } {
  return {
    value: initial,
    saves: 0,
    load() {
      return this.value
    },
    save(cursor) {
      this.value = cursor
      this.saves++
    },
  }
}

/** Follows until `count` events arrived, then stops the follower. */
async function collect(
  count: number,
  options: Partial<Parameters<typeof followFeed>[0]> & { cursorStore: CursorStore },
): Promise<RegistryFeedEvent[]> {
  const seen: RegistryFeedEvent[] = []
  const controller = new AbortController()
  await followFeed({
    client: client(),
    pollIntervalMs: 20,
    signal: controller.signal,
    ...options,
    onEvent(event) {
      seen.push(event)
      if (seen.length >= count) controller.abort()
    },
  })
  return seen
}

describe('getFeed', () => {
  it('pages strictly after the cursor and echoes the cursor on an empty page', async () => {
    const [a, b, c] = [registry.addEvent(), registry.addEvent(), registry.addEvent()]
    const first = await client().getFeed({ limit: 2 })
    expect(first.events.map((e) => e.event_id)).toEqual([a.event_id, b.event_id])
    expect(first).toMatchObject({ cursor: b.event_id, has_more: true })
    const second = await client().getFeed({ cursor: first.cursor, limit: 2 })
    expect(second.events.map((e) => e.event_id)).toEqual([c.event_id])
    const empty = await client().getFeed({ cursor: c.event_id })
    expect(empty).toMatchObject({ events: [], cursor: c.event_id, has_more: false })
  })

  it('sends type filters as a comma-separated list', async () => {
    registry.addEvent('agent.discovered', 'https://a.example')
    registry.addEvent('authorization.revoked')
    const page = await client().getFeed({ types: ['authorization.*', 'publisher.adagents_changed'] })
    expect(registry.requests.at(-1)!.url.searchParams.get('types')).toBe(
      'authorization.*,publisher.adagents_changed',
    )
    expect(page.events.map((e) => e.event_type)).toEqual(['authorization.revoked'])
  })

  it('rejects an unknown cursor with CursorExpiredError and a missing key with 401', async () => {
    const expired = await client()
      .getFeed({ cursor: '01900000-0000-7000-8000-ffffffffffff' })
      .catch((e: unknown) => e)
    expect(expired).toBeInstanceOf(CursorExpiredError)
    expect(expired).toMatchObject({
      status: 410,
      code: 'cursor_expired',
      cursor: '01900000-0000-7000-8000-ffffffffffff',
    })
    expect((expired as Error).message).toMatch(/re-bootstrap/)
    const anonymous = await createRegistryClient({ baseUrl: registry.url })
      .getFeed()
      .catch((e: unknown) => e)
    expect(anonymous).toBeInstanceOf(RegistryError)
    expect(anonymous).toMatchObject({ status: 401, code: 'unauthorized' })
  })
})

describe('followFeed', () => {
  it('delivers every event across pages, saves the cursor, and resumes from it', async () => {
    const initial = [registry.addEvent(), registry.addEvent(), registry.addEvent()]
    const store = memoryStore()
    const first = await collect(3, { cursorStore: store, limit: 2 })
    expect(first.map((e) => e.event_id)).toEqual(initial.map((e) => e.event_id))
    expect(store.value).toBe(initial[2]!.event_id)

    const later = [registry.addEvent('authorization.revoked'), registry.addEvent('property.updated')]
    const resumed = await collect(2, { cursorStore: store })
    expect(resumed.map((e) => e.event_id)).toEqual(later.map((e) => e.event_id))
    expect(registry.requests.at(-1)!.url.searchParams.get('cursor')).not.toBeNull()
  })

  it('picks up events added while it waits', async () => {
    registry.addEvent()
    const store = memoryStore()
    const pending = collect(3, { cursorStore: store })
    setTimeout(() => registry.addEvent(), 50)
    setTimeout(() => registry.addEvent(), 100)
    expect(await pending).toHaveLength(3)
  })

  it('rejects with CursorExpiredError on 410 unless onCursorExpired gives a new cursor', async () => {
    const event = registry.addEvent()
    const gone = memoryStore('01900000-0000-7000-8000-ffffffffffff')
    await expect(
      followFeed({ client: client(), cursorStore: gone, onEvent: () => {}, pollIntervalMs: 20 }),
    ).rejects.toBeInstanceOf(CursorExpiredError)

    const expiredCalls: CursorExpiredError[] = []
    const seen = await collect(1, {
      cursorStore: gone,
      onCursorExpired(error) {
        expiredCalls.push(error)
        return null
      },
    })
    expect(expiredCalls).toHaveLength(1)
    expect(seen.map((e) => e.event_id)).toEqual([event.event_id])
    expect(gone.value).toBe(event.event_id)
  })

  it('retries transient failures and stops on others', async () => {
    const event = registry.addEvent()
    registry.failFeed(503, 2)
    const retries: number[] = []
    const seen = await collect(1, {
      cursorStore: memoryStore(),
      retry: { initialDelayMs: 5 },
      onRetry: (error) => retries.push(error.status),
    })
    expect(retries).toEqual([503, 503])
    expect(seen[0]?.event_id).toBe(event.event_id)

    registry.failFeed(400, 1)
    await expect(
      followFeed({ client: client(), cursorStore: memoryStore(), onEvent: () => {} }),
    ).rejects.toMatchObject({ status: 400 })
  })

  it('resolves when aborted while idle', async () => {
    const controller = new AbortController()
    const running = followFeed({
      client: client(),
      cursorStore: memoryStore(),
      onEvent: () => {},
      pollIntervalMs: 60_000,
      signal: controller.signal,
    })
    setTimeout(() => controller.abort(), 30)
    await expect(running).resolves.toBeUndefined()
  })
})

describe('the SSE stream', () => {
  it('yields feed pages and heartbeats carrying the cursor', async () => {
    const event = registry.addEvent()
    const controller = new AbortController()
    const messages: FeedStreamMessage[] = []
    for await (const message of client().streamFeed({ signal: controller.signal })) {
      messages.push(message)
      if (message.event === 'heartbeat') controller.abort()
    }
    expect(messages[0]).toMatchObject({ event: 'feed', data: { events: [{ event_id: event.event_id }] } })
    expect(messages[1]).toMatchObject({ event: 'heartbeat', data: { cursor: event.event_id } })
  })

  it('rejects an unknown cursor before streaming', async () => {
    const stream = client().streamFeed({ cursor: '01900000-0000-7000-8000-ffffffffffff' })
    await expect(stream.next()).rejects.toBeInstanceOf(CursorExpiredError)
  })

  it('drives followFeed in stream mode, reconnecting when the server drops the stream', async () => {
    registry.addEvent()
    const store = memoryStore()
    const pending = collect(3, { cursorStore: store, mode: 'stream', retry: { initialDelayMs: 10 } })
    setTimeout(() => registry.addEvent(), 60)
    setTimeout(() => registry.dropStreams(), 120)
    setTimeout(() => registry.addEvent(), 180)
    const seen = await pending
    expect(seen.map((e) => e.event_id)).toEqual(registry.events.map((e) => e.event_id))
    expect(
      registry.requests.filter((r) => r.url.pathname === '/api/registry/feed/stream').length,
    ).toBeGreaterThanOrEqual(2)
  })
})
