import './polyfills.js'
import { SummaryLineReporter } from './summary-reporter.js'

export { SummaryLineReporter }
export { resolveTestPostgresUrl } from './postgres.js'

/**
 * The test options every workspace project shares.
 * @type {import('vitest/config').TestProjectInlineConfiguration['test']}
 */
export const sharedTestOptions = {
  include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'src/**/*.test.js'],
  testTimeout: 20_000,
  hookTimeout: 30_000,
}
