import './polyfills.js'

/** @import { Reporter, TestModule, TestSpecification, Vitest } from 'vitest/node' */

/**
 * @param {number} ms
 * @returns {string}
 */
function elapsed(ms) {
  const seconds = Math.round(ms / 1000)
  return seconds < 60
    ? `${seconds}s`
    : `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`
}

/**
 * A vitest reporter that prints a running count while the suite runs, one line every `every` test files or
 * every `intervalMs` (whichever comes first, and never a line per test):
 * `[12/257 files] 340 tests passed, 0 failed, 1 skipped (1m05s)`. When nothing has finished for `intervalMs`,
 * the line names the files still running, so a long file shows it is alive.
 * @implements {Reporter}
 */
export class ProgressReporter {
  /**
   * @param {{ every?: number, intervalMs?: number, write?: (line: string) => void, now?: () => number }} [options]
   */
  constructor(options = {}) {
    this.every = options.every ?? 10
    this.intervalMs = options.intervalMs ?? 15_000
    /** @type {((line: string) => void) | undefined} */
    this.write = options.write
    this.now = options.now ?? Date.now
    this.total = 0
    this.done = 0
    this.passed = 0
    this.failed = 0
    this.skipped = 0
    this.started = this.now()
    this.lastLine = this.started
    this.doneAtLastLine = 0
    /** @type {Map<string, string>} */
    this.running = new Map()
    /** @type {ReturnType<typeof setInterval> | undefined} */
    this.timer = undefined
  }

  /** @param {Vitest} vitest */
  onInit(vitest) {
    // Through vitest's logger, so the line lands above the default reporter's live summary in a terminal.
    this.write ??= (line) => vitest.logger.log(line)
  }

  /** @param {ReadonlyArray<TestSpecification>} specifications */
  onTestRunStart(specifications) {
    this.total = specifications.length
    this.done = 0
    this.passed = 0
    this.failed = 0
    this.skipped = 0
    this.started = this.now()
    this.lastLine = this.started
    this.doneAtLastLine = 0
    this.running.clear()
    clearInterval(this.timer)
    this.timer = setInterval(() => this.tick(), Math.min(this.intervalMs, 5_000))
    this.timer.unref()
  }

  /** @param {TestModule} testModule */
  onTestModuleStart(testModule) {
    this.running.set(testModule.id, `${testModule.project.name} ${testModule.relativeModuleId}`)
  }

  /** @param {TestModule} testModule */
  onTestModuleEnd(testModule) {
    this.running.delete(testModule.id)
    this.done += 1
    const tests = [...testModule.children.allTests()]
    if (testModule.state() === 'failed' && tests.length === 0) this.failed += 1
    for (const test of tests) {
      const state = test.result().state
      if (state === 'passed') this.passed += 1
      else if (state === 'failed') this.failed += 1
      else this.skipped += 1
    }
    if (this.done - this.doneAtLastLine >= this.every || this.now() - this.lastLine >= this.intervalMs)
      this.print(false)
  }

  onTestRunEnd() {
    clearInterval(this.timer)
    this.timer = undefined
    if (this.done !== this.doneAtLastLine) this.print(false)
  }

  /** Called by the timer: a line when none was printed for `intervalMs`. */
  tick() {
    if (this.now() - this.lastLine >= this.intervalMs) this.print(this.done === this.doneAtLastLine)
  }

  /** @param {boolean} stalled */
  print(stalled) {
    const now = this.now()
    let line =
      `[${this.done}/${this.total} files] ${this.passed} tests passed, ${this.failed} failed, ` +
      `${this.skipped} skipped (${elapsed(now - this.started)})`
    if (stalled && this.running.size > 0) line += `; running: ${[...this.running.values()].join(', ')}`
    this.lastLine = now
    this.doneAtLastLine = this.done
    this.write?.(line)
  }
}
