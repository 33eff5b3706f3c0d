/** The human report of a run: one line per storyboard, the failed steps with their reasons, a summary. */
import type { RunResult, StoryboardResult } from './result.js'

const MARK = { passed: 'PASS', failed: 'FAIL', skipped: 'SKIP', not_applicable: 'N/A ' } as const

/**
 * One line for a finished storyboard (the CLI's progress line).
 * @example storyboardLine(result) // 'PASS capability_discovery (universal/capability-discovery) 3/3 steps, 41 ms'
 */
export function storyboardLine(result: StoryboardResult): string {
  const passed = result.steps.filter((step) => step.status === 'passed').length
  const why = result.skip ? ` — ${result.skip.reason}: ${result.skip.detail}` : ''
  return `${MARK[result.status]} ${result.storyboard_id} (${result.key}) ${passed}/${result.steps.length} steps passed, ${result.duration_ms} ms${why}`
}

/**
 * The whole report: failures in detail, then the summary table.
 * @example console.log(renderReport(result))
 */
export function renderReport(result: RunResult): string {
  const lines: string[] = [
    `AdCP ${result.adcp_version} storyboards against ${result.agent_url} over ${result.protocol}`,
    '',
  ]
  for (const storyboard of result.storyboards) {
    lines.push(storyboardLine(storyboard))
    for (const step of storyboard.steps) {
      if (step.status !== 'failed') continue
      lines.push(
        `    ✗ ${step.phase_id} › ${step.step_id} (${step.task})${step.error ? `: ${step.error}` : ''}`,
      )
      for (const validation of step.validations) {
        if (!validation.passed) {
          lines.push(
            `        - ${validation.check}${validation.severity === 'advisory' ? ' [advisory]' : ''}: ${validation.detail ?? validation.description}`,
          )
        }
      }
    }
  }
  const { storyboards, steps } = result.summary
  lines.push(
    '',
    '              passed  failed  skipped  not_applicable',
    `storyboards  ${String(storyboards.passed).padStart(7)} ${String(storyboards.failed).padStart(7)} ${String(storyboards.skipped).padStart(8)} ${String(storyboards.not_applicable).padStart(15)}`,
    `steps        ${String(steps.passed).padStart(7)} ${String(steps.failed).padStart(7)} ${String(steps.skipped).padStart(8)} ${String(steps.not_applicable).padStart(15)}`,
    `advisory validations failed: ${result.summary.validations_advisory_failed}; ${result.duration_ms} ms${result.timed_out ? ' (run deadline reached)' : ''}`,
  )
  return lines.join('\n')
}
