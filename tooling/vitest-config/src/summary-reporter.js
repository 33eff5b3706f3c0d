import './polyfills.js'

/** @import { Reporter, TestModule } from 'vitest/node' */

/**
 * A vitest reporter that closes the run with one plain line, `tests: N passed, N failed, N skipped`,
 * after vitest's own summary, so that CI logs state the outcome in a shape any reader can find.
 * @implements {Reporter}
 */
export class SummaryLineReporter {
  /**
   * @param {ReadonlyArray<TestModule>} testModules
   * @param {ReadonlyArray<unknown>} unhandledErrors
   */
  onTestRunEnd(testModules, unhandledErrors) {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const testModule of testModules) {
      // A module that failed to load has no tests; count it as a failure so it is never silent.
      if (testModule.state() === 'failed' && [...testModule.children.allTests()].length === 0) failed += 1
      for (const test of testModule.children.allTests()) {
        const state = test.result().state
        if (state === 'passed') passed += 1
        else if (state === 'failed') failed += 1
        else skipped += 1
      }
    }
    failed += unhandledErrors.length
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`)
  }
}
