/**
 * The `task_completion.<inner>` capture prefix (storyboard-schema.yaml, context_outputs): when a step's answer is
 * a non-terminal task envelope (`submitted`, `working` or `input-required` with a `task_id`), the runner polls the
 * task until it leaves `submitted`/`working` and reads `<inner>` from the completed task's `result`. The task is
 * polled with AdCP's `get_task_status` (`include_result: true`), the same task over MCP and A2A.
 */
import type { RunContext } from './run-context.js'
import type { Step } from './types.js'

/** The path prefix that asks for the completion artifact. */
export const TASK_COMPLETION_PREFIX = 'task_completion.'

const PENDING = new Set(['submitted', 'working'])
const POLL_MS = 100

/** The completed task's `result`, or why there is none (a detail for capture_path_not_resolvable). */
export type Completion = { result: unknown } | { problem: string }

/**
 * Polls the task the answer names until it settles, within the step's timeout.
 * @example await taskCompletion(run, { status: 'submitted', task_id: 't1' }, step) // { result: { media_buy_id: 'mb_1' } }
 */
export async function taskCompletion(
  run: RunContext,
  body: Record<string, unknown> | undefined,
  step: Step,
): Promise<Completion> {
  const status = body?.status
  const taskId = body?.task_id
  if (typeof status !== 'string' || !['submitted', 'working', 'input-required'].includes(status))
    return { problem: `the answer is not a pending task (status ${JSON.stringify(status)})` }
  if (typeof taskId !== 'string') return { problem: 'the pending answer carries no task_id' }
  if (!run.profile.tasks.has('get_task_status'))
    return { problem: 'the agent offers no get_task_status to poll the task with' }
  const deadline = Date.now() + run.env.stepTimeoutMs
  for (;;) {
    const answer = await run.call('get_task_status', { task_id: taskId, include_result: true }, step)
    const current = answer.body?.status
    if (typeof current !== 'string') return { problem: `get_task_status answered no status for ${taskId}` }
    if (current === 'completed')
      return answer.body && 'result' in answer.body
        ? { result: answer.body.result }
        : { problem: `task ${taskId} completed without a result` }
    if (!PENDING.has(current)) return { problem: `task ${taskId} ended ${current}` }
    if (Date.now() + POLL_MS > deadline)
      return { problem: `task ${taskId} still ${current} at the step timeout` }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}
