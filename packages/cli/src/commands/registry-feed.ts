/** `adwire registry feed`: one page of the change feed, or follow it (polling or SSE) from a stored cursor. */
import { readFile, writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import {
  CursorExpiredError,
  followFeed,
  type CursorStore,
  type RegistryFeedEvent,
} from '@adwire/registry-client'
import { printJson, UsageError, type Io } from '../io.js'
import { clientFor, common, refused, registryHelp } from './registry-common.js'
import { asTyped } from '../help.js'

/** `adwire registry feed …`; `signal` stops `--follow`. */
export async function feed(argv: string[], io: Io, signal?: AbortSignal): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      ...common,
      follow: { type: 'boolean', short: 'f' },
      stream: { type: 'boolean' },
      'cursor-file': { type: 'string' },
      cursor: { type: 'string' },
      types: { type: 'string' },
      limit: { type: 'string' },
      interval: { type: 'string' },
    },
    allowPositionals: true,
  })
  if (values.help) {
    io.stdout(asTyped(registryHelp))
    return 0
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`)
  if (values.stream && !values.follow) throw new UsageError('--stream goes with --follow')
  const limit = values.limit === undefined ? undefined : Number(values.limit)
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 10_000)) {
    throw new UsageError('--limit is an integer from 1 to 10000')
  }
  const interval = values.interval === undefined ? 15 : Number(values.interval)
  if (!Number.isFinite(interval) || interval <= 0) throw new UsageError('--interval is a number of seconds')
  const types = values.types
    ?.split(',')
    .map((type) => type.trim())
    .filter(Boolean)
  for (const type of types ?? []) {
    if (!/^[a-z][a-z0-9_.]*\*?$/.test(type)) throw new UsageError(`invalid --types item "${type}"`)
  }
  const cursorFile = values['cursor-file']
  const client = clientFor(values)
  const cursorStore: CursorStore = {
    load: async () => {
      if (values.cursor !== undefined) return values.cursor
      if (!cursorFile) return null
      try {
        return (await readFile(cursorFile, 'utf8')).trim() || null
      } catch (error) {
        if ((error as { code?: string }).code === 'ENOENT') return null
        throw error
      }
    },
    save: async (cursor) => {
      if (cursorFile) await writeFile(cursorFile, `${cursor ?? ''}\n`)
    },
  }
  const onEvent = (event: RegistryFeedEvent) => printJson(io, event)
  const controller = new AbortController()
  const stop = () => controller.abort()
  signal?.addEventListener('abort', stop, { once: true })
  if (values.follow) {
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  }
  try {
    if (values.follow) {
      await followFeed({
        client,
        cursorStore,
        ...(types ? { types: types.join(',') } : {}),
        ...(limit !== undefined ? { limit } : {}),
        mode: values.stream ? 'stream' : 'poll',
        pollIntervalMs: interval * 1000,
        signal: controller.signal,
        onEvent,
        onRetry: (error, delay) =>
          io.stderr(`adwire: ${error.message}; retrying in ${Math.max(1, Math.round(delay / 1000))} s\n`),
      })
      return 0
    }
    // One pass: pull pages until the registry says there is nothing more.
    let cursor = (await cursorStore.load()) || null
    for (;;) {
      const page = await client.getFeed({
        cursor,
        ...(types ? { types: types.join(',') } : {}),
        ...(limit !== undefined ? { limit } : {}),
      })
      for (const event of page.events) {
        onEvent(event)
        cursor = event.event_id
      }
      if (page.cursor) cursor = page.cursor
      await cursorStore.save(cursor)
      if (!page.has_more || page.events.length === 0) return 0
    }
  } catch (error) {
    if (error instanceof CursorExpiredError) {
      io.stderr(
        `adwire: the registry no longer knows the cursor ${error.cursor ?? ''} (HTTP 410 cursor_expired).\n` +
          `adwire: re-sync what you mirror, then ${cursorFile ? `delete ${cursorFile} and ` : ''}` +
          'run again to start from the oldest retained event.\n',
      )
      return 1
    }
    return refused(io, error)
  } finally {
    signal?.removeEventListener('abort', stop)
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
  }
}
