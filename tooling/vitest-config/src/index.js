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
  // Three test files at a time on the 2-core machines (vitest's default there is one): most of the suite waits on
  // servers, child processes, PostgreSQL and timers, so more workers than cores fill the idle time. Measured on
  // the whole suite: 240 s with two workers, 210 s with three, 223 s with four. Every file starts its own
  // servers on port 0, in its own temporary folder and PostgreSQL schema. Set on each project: a project does
  // not take the root config's maxWorkers (only the command line's).
  maxWorkers: 3,
}
