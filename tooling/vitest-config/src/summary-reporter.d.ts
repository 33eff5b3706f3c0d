import type { Reporter } from 'vitest/node'
export declare class SummaryLineReporter implements Reporter {
  onTestRunEnd: NonNullable<Reporter['onTestRunEnd']>
}
