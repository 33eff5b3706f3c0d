/** The comply_test_controller answers (compliance/comply-test-controller-response.json arms). */

export type ControllerAnswer = Record<string, unknown> & { readonly success: boolean }

/** The ControllerError arm. */
export function controllerError(
  error:
    | 'INVALID_TRANSITION'
    | 'INVALID_STATE'
    | 'NOT_FOUND'
    | 'UNKNOWN_SCENARIO'
    | 'INVALID_PARAMS'
    | 'FORBIDDEN',
  detail: string,
  currentState?: string | null,
): ControllerAnswer {
  return {
    success: false,
    error,
    error_detail: detail,
    ...(currentState !== undefined ? { current_state: currentState } : {}),
  }
}

/** The StateTransitionSuccess arm. */
export const transitioned = (previous: string, current: string, message?: string): ControllerAnswer => ({
  success: true,
  previous_state: previous,
  current_state: current,
  ...(message ? { message } : {}),
})
