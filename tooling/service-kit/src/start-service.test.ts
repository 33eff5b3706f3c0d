/**
 * startService and its loops on a real socket on 127.0.0.1: the starting answer until the runtime is open, the
 * public URL, the loops (never overlapping themselves, failures logged) and the close order.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { startService } from './index.js'

/** A promise and the function that resolves it. */
function deferred() {
  let resolve!: () => void
  const promise = new Promise<void>((done) => (resolve = done))
  return { promise, resolve }
}

/** Resolves once `check()` holds (checked every 5 ms). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await sleep(5)
}

describe('startService', () => {
  it('answers starting() until the runtime is open, then serves the app under the public URL', async () => {
    const opened = deferred()
    const order: string[] = []
    let seenPublicUrl = ''
    const starting = startService({
      port: 0,
      publicUrl: 'https://agent.example',
      starting: () => Response.json({ starting: true }, { status: 503 }),
      log: () => {},
      async open(publicUrl) {
        seenPublicUrl = publicUrl
        await opened.promise
        return { close: async () => void order.push('runtime closed') }
      },
      app: () => () => new Response('ready'),
      started: async () => void order.push('started'),
      loops: () => [{ name: 'tick', everyMs: 5, run: async () => void order.push('tick') }],
    })
    await until(() => seenPublicUrl !== '')
    expect(seenPublicUrl).toBe('https://agent.example')
    opened.resolve()
    const service = await starting
    expect(service.publicUrl).toBe('https://agent.example')
    expect(await (await fetch(service.url)).text()).toBe('ready')
    await until(() => order.includes('tick'))
    expect(order[0]).toBe('started')
    await service.close()
    expect(order.at(-1)).toBe('runtime closed')
    const ticks = order.filter((entry) => entry === 'tick').length
    await sleep(30)
    expect(order.filter((entry) => entry === 'tick').length).toBe(ticks)
  })

  it('answers 503 while opening', async () => {
    const opened = deferred()
    const probe: { url?: string; answer?: Response } = {}
    const starting = startService({
      port: 0,
      starting: () => Response.json({ starting: true }, { status: 503 }),
      async open(publicUrl) {
        probe.url = publicUrl
        probe.answer = await fetch(publicUrl)
        await opened.promise
        return { close: async () => {} }
      },
      app: () => () => new Response('ready'),
    })
    await until(() => probe.answer !== undefined)
    expect(probe.answer!.status).toBe(503)
    expect(await probe.answer!.json()).toEqual({ starting: true })
    opened.resolve()
    const service = await starting
    expect(service.publicUrl).toBe(probe.url)
    await service.close()
  })

  it('closes the socket when open() fails', async () => {
    let url = ''
    await expect(
      startService({
        port: 0,
        async open(publicUrl) {
          url = publicUrl
          throw new Error('no database')
        },
        app: () => () => new Response('never'),
      }),
    ).rejects.toThrow('no database')
    await expect(fetch(url)).rejects.toThrow()
  })
})
