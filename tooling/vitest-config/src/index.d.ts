import type { TestProjectInlineConfiguration } from 'vitest/config'
export { ProgressReporter } from './progress-reporter.js'
export { SummaryLineReporter } from './summary-reporter.js'
export { resolveTestPostgresUrl } from './postgres.js'
export declare const sharedTestOptions: NonNullable<TestProjectInlineConfiguration['test']>
