/**
 * The rules of an owner's refresh (registry.yaml `refreshAgent`): at most one refresh a minute per agent (the
 * document's per-agent limit), and whether the refresh goes on to start a compliance run.
 */

/** Refresh may run once a minute per agent. */
export const REFRESH_DEBOUNCE_MS = 60_000

/** A per-agent throttle of refreshes, kept in memory (one registry process). */
export interface RefreshThrottle {
  /**
   * Takes the agent's refresh slot at `now` (Unix ms): `undefined` when taken, else the whole seconds (≥ 1)
   * until the slot frees. Agent URLs are compared case-insensitively.
   */
  take(agentUrl: string, now: number): number | undefined
}

/**
 * Creates an empty {@link RefreshThrottle}.
 *
 * @example
 * const throttle = createRefreshThrottle()
 * throttle.take('https://agent.example/mcp', 0) // undefined
 * throttle.take('https://agent.example/mcp', 1_000) // 59
 */
export function createRefreshThrottle(debounceMs = REFRESH_DEBOUNCE_MS): RefreshThrottle {
  const last = new Map<string, number>()
  return {
    take(agentUrl, now) {
      const key = agentUrl.toLowerCase()
      const previous = last.get(key)
      if (previous !== undefined && now - previous < debounceMs) {
        return Math.max(1, Math.ceil((debounceMs - (now - previous)) / 1000))
      }
      last.set(key, now)
      return undefined
    },
  }
}

/** Why a refresh starts no compliance run, or `run`. */
export type RefreshRunDecision = 'run' | 'no_runner' | 'auth_required'

/**
 * Whether an online agent's refresh starts a compliance run: not without a runner, and not when the agent asks
 * for authorization (a 401 to the probe) and the owner saved no credentials for it.
 *
 * @example
 * refreshRunDecision({ hasRunner: true, oauthRequired: true, hasAuth: false }) // 'auth_required'
 */
export function refreshRunDecision(input: {
  readonly hasRunner: boolean
  readonly oauthRequired: boolean
  readonly hasAuth: boolean
}): RefreshRunDecision {
  if (!input.hasRunner) return 'no_runner'
  if (input.oauthRequired && !input.hasAuth) return 'auth_required'
  return 'run'
}
