/**
 * The human report of a run: one line per storyboard, the failed steps with their reasons (long ones cut), a
 * summary.
 */
import type { RunResult, StoryboardResult } from './result.js'

const MARK = { passed: 'PASS', failed: 'FAIL', skipped: 'SKIP', not_applicable: 'N/A ' } as const

/** How much of a step error or check detail the report prints; the JSON result keeps all of it. */
export const REPORT_DETAIL_LIMIT = 500

/**
 * `text` cut to `limit` characters with a `… (N more characters)` marker, so that a failure quoting a whole
 * response stays readable; shorter text is returned as it is.
 * @example clip('x'.repeat(14_000)) // 'xxx…x… (13500 more characters)'
 */
export function clip(text: string, limit: number = REPORT_DETAIL_LIMIT): string {
  if (text.length <= limit) return text
  // Never split a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(text[limit - 1]!) ? limit - 1 : limit
  return `${text.slice(0, end)}… (${text.length - end} more characters)`
}

/**
 * One line for a finished storyboard (the CLI's progress line).
 * @example storyboardLine(result) // 'PASS capability_discovery (universal/capability-discovery) 3/3 steps, 41 ms'
 */
export function storyboardLine(result: StoryboardResult): string {
  const passed = result.steps.filter((step) => step.status === 'passed').length
  const why = result.skip ? ` — ${result.skip.reason}: ${clip(result.skip.detail)}` : ''
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
        `    ✗ ${step.phase_id} › ${step.step_id} (${step.task})${step.error ? `: ${clip(step.error)}` : ''}`,
      )
      for (const validation of step.validations) {
        if (!validation.passed) {
          lines.push(
            `        - ${validation.check}${validation.severity === 'advisory' ? ' [advisory]' : ''}: ${clip(validation.detail ?? validation.description)}`,
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
