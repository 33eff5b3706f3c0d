import { appendFileSync } from 'node:fs'
import './polyfills.js'

/** @import { Reporter, TestModule } from 'vitest/node' */

/**
 * The first line of an error's message, for one-line failure lists.
 * @param {unknown} error
 * @returns {string}
 */
function firstLine(error) {
  const message =
    error && typeof error === 'object' && 'message' in error ? String(error.message) : String(error)
  return (message.split('\n', 1)[0] ?? '').slice(0, 300)
}

/**
 * A vitest reporter that closes the run with one plain line, `tests: N passed, N failed, N skipped`,
 * after vitest's own summary, so that CI logs state the outcome in a shape any reader can find. Each failed
 * test is listed above that line (`failed: project path > name: first line of the error`); when
 * `ADWIRE_TEST_FAILURES_FILE` is set, the same lines are appended to that file (CI prints it last).
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
    /** @type {string[]} */
    const failures = []
    for (const testModule of testModules) {
      const where = `${testModule.project.name} ${testModule.relativeModuleId}`
      // A module that failed to load has no tests; count it as a failure so it is never silent.
      if (testModule.state() === 'failed' && [...testModule.children.allTests()].length === 0) {
        failed += 1
        failures.push(`${where}: ${firstLine(testModule.errors()[0] ?? 'failed to load')}`)
      }
      for (const test of testModule.children.allTests()) {
        const result = test.result()
        if (result.state === 'passed') passed += 1
        else if (result.state === 'failed') {
          failed += 1
          failures.push(`${where} > ${test.fullName}: ${firstLine(result.errors?.[0] ?? 'failed')}`)
        } else skipped += 1
      }
    }
    failed += unhandledErrors.length
    for (const error of unhandledErrors) failures.push(`unhandled error: ${firstLine(error)}`)
    const lines = failures.map((line) => `failed: ${line}\n`).join('')
    if (lines && process.env.ADWIRE_TEST_FAILURES_FILE)
      appendFileSync(process.env.ADWIRE_TEST_FAILURES_FILE, lines)
    process.stdout.write(`\n${lines}tests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`)
  }
}
