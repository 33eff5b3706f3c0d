import { JetStreamApiCodes, JetStreamApiError, StorageType, type JetStreamManager } from '@nats-io/jetstream'
import { nanos } from '@nats-io/transport-node'
import { NatsSinkError } from './errors.js'

/** What {@link ensureStream} needs of the sink's options. */
export interface StreamTarget {
  readonly stream: string
  readonly subject: string
  readonly duplicateWindowSeconds: number | undefined
}

function isStreamNotFound(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound
}

/**
 * Makes sure the stream exists: creates it when absent (the subject, file storage, the duplicate window or
 * JetStream's default of 2 minutes); when it exists and a window was asked for that differs from the stream's,
 * updates the window. Rejects with a `sink_unavailable` {@link NatsSinkError} when JetStream refuses.
 *
 * @example
 * await ensureStream(await jetstreamManager(connection), { stream: 'ADCP_WEBHOOKS', subject: 'adcp.webhooks', duplicateWindowSeconds: 3600 })
 */
export async function ensureStream(manager: JetStreamManager, target: StreamTarget): Promise<void> {
  const window =
    target.duplicateWindowSeconds === undefined ? undefined : nanos(target.duplicateWindowSeconds * 1000)
  try {
    let info
    try {
      info = await manager.streams.info(target.stream)
    } catch (error) {
      if (!isStreamNotFound(error)) throw error
      await manager.streams.add({
        name: target.stream,
        subjects: [target.subject],
        storage: StorageType.File,
        ...(window === undefined ? {} : { duplicate_window: window }),
      })
      return
    }
    if (window !== undefined && info.config.duplicate_window !== window) {
      await manager.streams.update(target.stream, { ...info.config, duplicate_window: window })
    }
  } catch (error) {
    throw new NatsSinkError(
      'sink_unavailable',
      `cannot ensure the JetStream stream '${target.stream}' for subject '${target.subject}': ${describe(error)}`,
      { cause: error },
    )
  }
}

/** A NATS or JetStream error as one line. */
export function describe(error: unknown): string {
  if (error instanceof Error) return error.message || error.name
  return String(error)
}
