import './polyfills.js'
import { ProgressReporter } from './progress-reporter.js'
import { SummaryLineReporter } from './summary-reporter.js'

export { ProgressReporter, SummaryLineReporter }
export { resolveTestPostgresUrl } from './postgres.js'

/**
 * The test options every workspace project shares.
 * @type {import('vitest/config').TestProjectInlineConfiguration['test']}
 */
export const sharedTestOptions = {
  include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'src/**/*.test.js'],
  testTimeout: 20_000,
  hookTimeout: 30_000,
  // The files of a worker share their imports (a third of the suite's time was importing the same modules
  // again for every file). Tests must not depend on a fresh module state: each file starts its own servers,
  // stores and temporary folders.
  isolate: false,
}
