/** The one error class of @adwire/storyboards. */

/** What went wrong, as a stable string. */
export type StoryboardErrorCode =
  /** The bundle folder is missing or a file in it is not a valid storyboard (storyboard-schema.yaml load rules). */
  | 'bundle_invalid'
  /** No storyboard with the requested id in the bundle. */
  | 'storyboard_not_found'
  /** A check kind the runner does not grade; it never passes silently. */
  | 'unknown_check'
  /** The agent could not be reached or spoke no MCP/A2A at the URL. */
  | 'connection_failed'
  /** Bad runner options (URL, protocol, limits). */
  | 'invalid_options'

const brand = Symbol.for('@adwire/storyboards/StoryboardError')

/**
 * Thrown by the loader and the runner for failures of the run itself (not of the agent under test: those are
 * step results).
 * @example
 * try { bundle.get('nope') } catch (error) { if (StoryboardError.is(error)) console.log(error.code) }
 */
export class StoryboardError extends Error {
  override readonly name = 'StoryboardError'
  readonly [brand] = true
  constructor(
    readonly code: StoryboardErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
  static is(value: unknown): value is StoryboardError {
    return typeof value === 'object' && value !== null && brand in value
  }
}
