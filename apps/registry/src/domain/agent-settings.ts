/**
 * The owner's changes to an agent's compliance settings (registry.yaml `updateAgentLifecycle`,
 * `updateAgentComplianceOptOut`, `updateAgentMonitoringPause`, `updateAgentMonitoringInterval`,
 * `requeueAgentForHeartbeat`): each is the patch stored over the current settings at `now` (Unix ms). An empty
 * patch changes nothing.
 */
import { iso, type AgentSettings, type SettingsPatch } from '../compliance/status-store.js'

const HOUR_MS = 3_600_000

/**
 * Moves the agent to another lifecycle stage.
 *
 * @example
 * lifecycleChange('production') // { lifecycleStage: 'production' }
 */
export const lifecycleChange = (stage: AgentSettings['lifecycleStage']): SettingsPatch => ({
  lifecycleStage: stage,
})

/**
 * Opting out revokes every badge; opting back in needs a passing full-suite run started after `now`, so both
 * directions move `requalifySince` to now. Repeating the current choice changes nothing.
 *
 * @example
 * optOutChange(true, current, Date.now()) // { optOut: true, requalifySince: '2026-…' }
 */
export function optOutChange(optOut: boolean, current: AgentSettings, now: number): SettingsPatch {
  return optOut === current.optOut ? {} : { optOut, requalifySince: iso(now) }
}

/**
 * Pauses or resumes monitoring; `pausedAt` records when a pause began. Repeating the current state changes
 * nothing.
 *
 * @example
 * pauseChange(true, current, Date.now()) // { paused: true, pausedAt: '2026-…' }
 */
export function pauseChange(paused: boolean, current: AgentSettings, now: number): SettingsPatch {
  return paused === current.paused ? {} : { paused, pausedAt: paused ? iso(now) : null }
}

/**
 * Sets the heartbeat interval. The next heartbeat moves with it (last check plus the new interval); an agent
 * never checked (or requeued) stays due as it was.
 *
 * @example
 * intervalChange(12, current) // { intervalHours: 12, nextCheckAt: '…' }
 */
export function intervalChange(hours: number, current: AgentSettings): SettingsPatch {
  return {
    intervalHours: hours,
    nextCheckAt: current.lastCheckedAt
      ? iso(Date.parse(current.lastCheckedAt) + hours * HOUR_MS)
      : current.nextCheckAt,
  }
}

/**
 * Requeues the agent: it is due for a heartbeat at once.
 *
 * @example
 * requeueChange() // { lastCheckedAt: null, nextCheckAt: null }
 */
export const requeueChange = (): SettingsPatch => ({ lastCheckedAt: null, nextCheckAt: null })
