/**
 * The relay's state as the receiver shows it. `/health` is public, so it carries the lag and the time of the
 * last error but not the error's text, which can name an internal broker host, a queue or a credential-free
 * URL of the private network; the admin API (`GET /api/relay`) and the page show the text.
 */
import type { ReceiverDeps } from './deps.js'

/** The relay's full state: the sink kind, the lag, what this process published, the last error. */
export interface RelayView {
  readonly sink: string | null
  readonly pending: number
  readonly oldest_pending_s: number | null
  readonly published: number
  readonly last_error: string | null
  readonly last_error_at: string | null
}

/** Reads the relay's state (its backlog from the store); the sink kind is null without a running relay. */
export async function relayStatus(deps: ReceiverDeps): Promise<RelayView> {
  if (!deps.relayStatus) {
    const pending = await deps.storage.db.pendingForwards()
    return {
      sink: null,
      pending,
      oldest_pending_s: null,
      published: 0,
      last_error: null,
      last_error_at: null,
    }
  }
  const status = await deps.relayStatus()
  return {
    sink: status.sink,
    pending: status.pending,
    oldest_pending_s: status.oldestPendingSeconds === null ? null : Math.round(status.oldestPendingSeconds),
    published: status.published,
    last_error: status.lastError?.message ?? null,
    last_error_at: status.lastError ? new Date(Math.round(status.lastError.at * 1000)).toISOString() : null,
  }
}

/** What anyone may read: everything but the error's text (its time stays: something failed, and when). */
export function publicRelayStatus(view: RelayView): Omit<RelayView, 'last_error'> {
  const { last_error: _text, ...rest } = view
  return rest
}
