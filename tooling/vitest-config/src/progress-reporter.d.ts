import type { Reporter } from 'vitest/node'
export declare class ProgressReporter implements Reporter {
  constructor(options?: {
    every?: number
    intervalMs?: number
    write?: (line: string) => void
    now?: () => number
  })
  onInit: NonNullable<Reporter['onInit']>
  onTestRunStart: NonNullable<Reporter['onTestRunStart']>
  onTestModuleStart: NonNullable<Reporter['onTestModuleStart']>
  onTestModuleEnd: NonNullable<Reporter['onTestModuleEnd']>
  onTestRunEnd: NonNullable<Reporter['onTestRunEnd']>
  /** Prints a line when none was printed for the interval (the reporter's timer calls it). */
  tick(): void
}
