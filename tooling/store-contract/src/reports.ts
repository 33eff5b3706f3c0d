/** The delivery report the sender suites fire: one completed buy's totals for a day. */

/**
 * A delivery report of `mediaBuyId` (`scheduled` carries sequence 1; `final` ends the buy).
 *
 * @example
 * await buy.finish('completed', report('mb_1', 'final'))
 */
export const report = (mediaBuyId: string, type: string) => ({
  result: {
    notification_type: type,
    ...(type === 'scheduled' ? { sequence_number: 1 } : {}),
    reporting_period: { start: '2026-04-17T00:00:00Z', end: '2026-04-17T23:59:59Z' },
    currency: 'USD',
    media_buy_deliveries: [
      {
        media_buy_id: mediaBuyId,
        status: 'completed',
        totals: { impressions: 10, spend: 1 },
        by_package: [],
      },
    ],
  },
})
