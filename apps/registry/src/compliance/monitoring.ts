/**
 * The monitoring scheduler: heartbeats of every registered member agent that is neither paused nor opted out,
 * each on its own interval (6–168 hours, default 24). Due times live in the database
 * (`registry_agent_compliance.next_check_at`), so a restarted registry picks up where it left: an agent that
 * came due while it was down fires at start, the others when their time comes. A heartbeat is claimed with a
 * compare-and-set on the due time before it is launched, so instances sharing a database fire it once.
 *
 * A heartbeat starts a full-suite run through the {@link ComplianceRunLauncher} (it returns at once; the runs
 * side reports outcomes to the status service) and is logged in the outbound request log (the heartbeat
 * history of `GET …/monitoring/requests`). The scheduler sleeps until the soonest due time, at most
 * `pollMs` (other instances may change schedules), and wakes at once when a schedule changes here.
 */
import type { ComplianceRunLauncher } from './contract.js'
import type { ComplianceStatusService } from './status.js'
import { iso } from './status-store.js'

/** The `user_agent` of the registry's outbound compliance requests. */
export const MONITOR_USER_AGENT = 'adwire-registry-compliance'

const HOUR = 3_600_000
const BATCH = 25

export interface MonitoringScheduler {
  start(): void
  /** Re-reads due times now. */
  wake(): void
  /** Fires every heartbeat due now; resolves to how many fired (tests, and the loop). */
  runDue(): Promise<number>
  /** Stops the timer and waits for a cycle in flight. */
  stop(): Promise<void>
}

/** Starts a heartbeat run for one agent and logs it; resolves to the run ids (empty when the launch failed). */
export async function launchLogged(
  status: ComplianceStatusService,
  launcher: ComplianceRunLauncher,
  agentUrl: string,
  trigger: 'heartbeat' | 'refresh',
  now: () => number,
): Promise<{ runIds: readonly string[]; error?: string }> {
  const started = now()
  const timer = performance.now()
  let runIds: readonly string[] = []
  let error: string | undefined
  try {
    runIds = (await launcher.launch(agentUrl, { trigger })).runIds
    for (const runId of runIds) await status.store.recordLaunch(runId, agentUrl, trigger, true, now())
  } catch (failure) {
    error = failure instanceof Error ? failure.message : String(failure)
  }
  await status.store.addRequest({
    agent_url: agentUrl,
    request_type: trigger === 'heartbeat' ? 'compliance_heartbeat' : 'compliance_refresh',
    user_agent: MONITOR_USER_AGENT,
    response_time_ms: Math.round(performance.now() - timer),
    success: error === undefined,
    error_message: error ?? null,
    created_at: iso(started),
  })
  return error === undefined ? { runIds } : { runIds, error }
}

export function createMonitoringScheduler(options: {
  status: ComplianceStatusService
  launcher: ComplianceRunLauncher
  now: () => number
  log: (entry: Record<string, unknown>) => void
  /** The longest sleep between reads of the schedule, ms. */
  pollMs: number
}): MonitoringScheduler {
  const { status, launcher, now, log, pollMs } = options
  const store = status.store
  let timer: ReturnType<typeof setTimeout> | undefined
  let cycle: Promise<void> | undefined
  let again = false
  let stopped = true

  const runDue = async (): Promise<number> => {
    await store.enrolMemberAgents(now())
    let fired = 0
    for (;;) {
      const at = now()
      const due = await store.dueAgents(at, BATCH)
      let claimed = 0
      for (const agent of due) {
        const next = iso(at + agent.intervalHours * HOUR)
        if (!(await store.claimHeartbeat(agent.agentUrl, agent.nextCheckAt, iso(at), next))) continue
        claimed += 1
        const { runIds, error } = await launchLogged(status, launcher, agent.agentUrl, 'heartbeat', now)
        log({
          compliance_heartbeat: agent.agentUrl,
          run_ids: runIds,
          ...(error ? { error } : {}),
          next_check_at: next,
        })
      }
      fired += claimed
      if (due.length < BATCH || claimed === 0) return fired
    }
  }

  const schedule = (delay: number) => {
    if (stopped) return
    clearTimeout(timer)
    timer = setTimeout(run, Math.max(0, Math.min(delay, pollMs)))
    timer.unref?.()
  }

  function run(): void {
    if (stopped) return
    if (cycle) {
      again = true
      return
    }
    cycle = (async () => {
      let delay = pollMs
      try {
        await runDue()
        const soonest = await store.nextDue()
        if (soonest === null) delay = 0
        else if (soonest !== undefined) delay = Date.parse(soonest) - now()
      } catch (error) {
        log({ compliance_monitoring: 'failed', error: String(error) })
      }
      cycle = undefined
      if (again) {
        again = false
        delay = 0
      }
      schedule(delay)
    })()
  }

  status.onScheduleChange(() => {
    if (!stopped) schedule(0)
  })

  return {
    start() {
      if (!stopped) return
      stopped = false
      schedule(0)
    },
    wake() {
      if (!stopped) schedule(0)
    },
    runDue,
    async stop() {
      stopped = true
      clearTimeout(timer)
      await cycle
    },
  }
}
