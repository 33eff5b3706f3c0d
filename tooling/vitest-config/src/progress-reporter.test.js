import { describe, expect, it } from 'vitest'
import { ProgressReporter } from './progress-reporter.js'

/**
 * A stand-in for vitest's TestModule with the fields the reporter reads.
 * @param {string} id
 * @param {Array<'passed' | 'failed' | 'skipped'>} states
 * @param {'passed' | 'failed'} [moduleState]
 * @returns {any}
 */
function testModule(id, states, moduleState = states.includes('failed') ? 'failed' : 'passed') {
  return {
    id,
    relativeModuleId: `src/${id}.test.ts`,
    project: { name: 'demo' },
    state: () => moduleState,
    children: { allTests: () => states.map((state) => ({ result: () => ({ state }) })) },
  }
}

/** @param {{ every?: number, intervalMs?: number }} options */
function setup(options) {
  /** @type {string[]} */
  const lines = []
  let clock = 0
  const reporter = new ProgressReporter({ ...options, write: (line) => lines.push(line), now: () => clock })
  return {
    lines,
    reporter,
    /** @param {number} ms */
    advance(ms) {
      clock += ms
    },
  }
}

describe('ProgressReporter', () => {
  it('prints a running count every N files and at the end, not a line per file', () => {
    const { lines, reporter, advance } = setup({ every: 2, intervalMs: 60_000 })
    reporter.onTestRunStart(/** @type {any} */ (new Array(5)))
    const modules = [
      testModule('a', ['passed', 'passed']),
      testModule('b', ['passed', 'failed']),
      testModule('c', ['skipped']),
      testModule('d', [], 'failed'),
      testModule('e', ['passed']),
    ]
    for (const module of modules) {
      reporter.onTestModuleStart(module)
      advance(1_000)
      reporter.onTestModuleEnd(module)
    }
    reporter.onTestRunEnd(/** @type {any} */ ([]), [], 'passed')
    expect(lines).toEqual([
      '[2/5 files] 3 tests passed, 1 failed, 0 skipped (2s)',
      '[4/5 files] 3 tests passed, 2 failed, 1 skipped (4s)',
      '[5/5 files] 4 tests passed, 2 failed, 1 skipped (5s)',
    ])
  })

  it('prints a line after the interval even between N files, and names the files still running when stalled', () => {
    const { lines, reporter, advance } = setup({ every: 100, intervalMs: 15_000 })
    reporter.onTestRunStart(/** @type {any} */ (new Array(3)))
    const slow = testModule('slow', ['passed'])
    const quick = testModule('quick', ['passed'])
    reporter.onTestModuleStart(slow)
    reporter.onTestModuleStart(quick)
    advance(16_000)
    reporter.onTestModuleEnd(quick)
    advance(10_000)
    reporter.tick()
    advance(6_000)
    reporter.tick()
    reporter.onTestModuleEnd(slow)
    reporter.onTestRunEnd(/** @type {any} */ ([]), [], 'passed')
    expect(lines).toEqual([
      '[1/3 files] 1 tests passed, 0 failed, 0 skipped (16s)',
      '[1/3 files] 1 tests passed, 0 failed, 0 skipped (32s); running: demo src/slow.test.ts',
      '[2/3 files] 2 tests passed, 0 failed, 0 skipped (32s)',
    ])
  })
})
