/** The error of an unresolvable storyboard placeholder. */

/** A placeholder the run cannot resolve (grading code `unresolved_substitution`). */
export class UnresolvedSubstitution extends Error {
  override readonly name = 'UnresolvedSubstitution'
  constructor(
    readonly token: string,
    /** The `$context` name it needed, when it was one. */
    readonly contextName?: string,
  ) {
    super(`unresolved_substitution: ${token}`)
  }
}
