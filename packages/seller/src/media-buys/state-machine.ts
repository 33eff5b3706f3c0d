/**
 * The media buy state machine (protocols/media-buy/state-machine.yaml, enums/media-buy-status.json):
 * pending_creatives → pending_start | active | paused | canceled | rejected; pending_start → active | paused |
 * canceled | rejected; active ↔ paused; active and paused → completed | canceled; completed, rejected and
 * canceled are terminal. Buyer updates on a terminal buy are INVALID_STATE, a second cancel NOT_CANCELLABLE.
 */
import { AgentError } from '@adwire/agent-server'
import type { MediaBuyStatus } from './types.js'

export const TERMINAL: ReadonlySet<MediaBuyStatus> = new Set(['completed', 'rejected', 'canceled'])

const NEXT: Readonly<Record<MediaBuyStatus, readonly MediaBuyStatus[]>> = {
  pending_creatives: ['pending_start', 'active', 'paused', 'canceled', 'rejected'],
  pending_start: ['active', 'paused', 'canceled', 'rejected', 'pending_creatives'],
  active: ['paused', 'completed', 'canceled', 'pending_creatives'],
  paused: ['active', 'completed', 'canceled', 'pending_start', 'pending_creatives'],
  completed: [],
  rejected: [],
  canceled: [],
}

/** Whether the machine allows `from` → `to` (a status to itself is no transition and always allowed). */
export function canTransition(from: MediaBuyStatus, to: MediaBuyStatus): boolean {
  return from === to || NEXT[from].includes(to)
}

/** Throws INVALID_STATE for a buyer update on a terminal buy (NOT_CANCELLABLE for a second cancel). */
export function assertUpdatable(status: MediaBuyStatus, mediaBuyId: string, cancel: boolean): void {
  if (!TERMINAL.has(status)) return
  if (cancel)
    throw new AgentError(
      'NOT_CANCELLABLE',
      `media buy ${mediaBuyId} is already ${status}; it cannot be canceled`,
      {
        field: 'canceled',
        status: 409,
        details: { current_status: status },
      },
    )
  throw new AgentError(
    'INVALID_STATE',
    `media buy ${mediaBuyId} is ${status}, a terminal state; it cannot be changed`,
    {
      status: 409,
      details: { current_status: status },
    },
  )
}

/** The buyer's actions in a status (`valid_actions`, deprecated flat vocabulary). */
export function validActions(status: MediaBuyStatus): string[] {
  if (TERMINAL.has(status)) return []
  const common = [
    'cancel',
    'update_budget',
    'update_dates',
    'update_packages',
    'add_packages',
    'sync_creatives',
  ]
  const always = ['update_creative_assignments', 'replace_creative', 'update_pacing', 'update_targeting']
  if (status === 'active') return ['pause', ...common, ...always]
  if (status === 'paused') return ['resume', ...common, ...always]
  return ['pause', ...common, ...always]
}

/** `available_actions[]`: every valid action is self-serve on this seller. */
export function availableActions(status: MediaBuyStatus): { action: string; mode: 'self_serve' }[] {
  return validActions(status).map((action) => ({ action, mode: 'self_serve' as const }))
}
