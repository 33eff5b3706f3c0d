import { describe, expect, it } from 'vitest'
import { loadBundle } from '../src/bundle.js'
import { clip, renderReport, storyboardLine } from '../src/report.js'
import type { RunResult, StoryboardResult } from '../src/result.js'
import { suggestStoryboards } from '../src/suggest.js'

const counts = { passed: 0, failed: 1, skipped: 0, not_applicable: 0 }

function runWith(storyboard: StoryboardResult): RunResult {
  return {
    format: 'adwire-storyboards-result/1',
    adcp_version: '3.1.19',
    agent_url: 'http://127.0.0.1:1/mcp',
    protocol: 'mcp',
    started_at: '2026-01-01T00:00:00.000Z',
    duration_ms: 5,
    timed_out: false,
    summary: { storyboards: counts, steps: counts, validations_advisory_failed: 0 },
    storyboards: [storyboard],
  }
}

describe('the failure report', () => {
  // A failing step that quotes a whole get_products response: 14,000 characters on one line before the cut.
  const response = JSON.stringify({ products: 'p'.repeat(14_000) })
  const storyboard: StoryboardResult = {
    key: 'protocols/media-buy/index',
    storyboard_id: 'media_buy_seller',
    title: 'media buy',
    status: 'failed',
    duration_ms: 3,
    steps: [
      {
        phase_id: 'discovery',
        step_id: 'get_products',
        task: 'get_products',
        status: 'failed',
        duration_ms: 2,
        error: `the client rejected the response: ${response}`,
        validations: [
          {
            check: 'response_schema',
            description: 'valid',
            passed: false,
            severity: 'required',
            detail: response,
          },
          {
            check: 'field_present',
            description: 'short',
            passed: false,
            severity: 'required',
            detail: 'no products',
          },
        ],
        response,
      },
    ],
  }

  it('cuts step errors and check details at 500 characters with a "… (N more characters)" marker', () => {
    const report = renderReport(runWith(storyboard))
    const longest = Math.max(...report.split('\n').map((line) => line.length))
    expect(longest).toBeLessThan(600)
    expect(report).toContain(`… (${response.length - 500} more characters)`)
    expect(report).toContain(`… (${response.length + 34 - 500} more characters)`)
    expect(report).toContain('- field_present: no products\n')
    // The result document keeps the whole response for --json.
    expect(storyboard.steps[0]!.response).toHaveLength(response.length)
  })

  it('cuts a long skip reason on the progress line too', () => {
    const skipped: StoryboardResult = {
      ...storyboard,
      status: 'skipped',
      steps: [],
      skip: { reason: 'requirement_unmet', detail: 'r'.repeat(2_000) },
    }
    expect(storyboardLine(skipped).length).toBeLessThan(700)
    expect(storyboardLine(skipped)).toContain('… (1500 more characters)')
  })

  it('leaves text up to the limit as it is and never splits a surrogate pair', () => {
    expect(clip('x'.repeat(500))).toBe('x'.repeat(500))
    expect(clip(`${'x'.repeat(499)}😀tail`)).toBe(`${'x'.repeat(499)}… (6 more characters)`)
  })
})

describe('an unknown storyboard reference', () => {
  const bundle = loadBundle()

  it('suggests the full id of a storyboard named by its last part', () => {
    expect(suggestStoryboards(bundle.entries, 'vendor_metric_accountability')).toEqual([
      'media_buy_seller/vendor_metric_accountability',
    ])
    expect(() => bundle.get('vendor_metric_accountability')).toThrow(
      expect.objectContaining({
        code: 'storyboard_not_found',
        message: expect.stringMatching(/did you mean "media_buy_seller\/vendor_metric_accountability"\?$/),
      }),
    )
  })

  it('suggests ids that contain a partial reference, and near misses of a typo', () => {
    expect(suggestStoryboards(bundle.entries, 'media_buy_seller/vendor_metric')).toEqual([
      'media_buy_seller/vendor_metric_accountability',
      'media_buy_seller/vendor_metric_catalog_precondition',
      'media_buy_seller/vendor_metric_optimization_flow',
    ])
    expect(suggestStoryboards(bundle.entries, 'capability_discovry')).toEqual(['capability_discovery'])
  })

  it('suggests nothing for a reference that resembles no storyboard', () => {
    expect(suggestStoryboards(bundle.entries, 'nope')).toEqual([])
    expect(() => bundle.get('nope')).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('did you mean') }),
    )
  })
})
