/** What a seller is configured with: how it reviews buys and creatives, where its formats live, its sandbox. */
import type { Resource } from '@adwire/agent-server'

/** The areas a seller's bearer grants cover (agent-server permissions). */
export const RESOURCES: readonly Resource[] = ['products', 'media_buys', 'creatives', 'reports']

/** When a new media buy waits for the seller's review before it is confirmed. */
export type BuyReview = 'none' | 'over_budget' | 'always'

/** Where the seller keeps its records: a SQLite file or a PostgreSQL schema. */
export type DatabaseConfig =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly connectionString: string; readonly schema: string }

export interface SellerSettings {
  /** The creative agent whose standard formats the seller's products reference (no trailing slash). */
  readonly creativeAgentUrl: string
  /** When a new buy waits for review: never, above `reviewBudgetThreshold`, or always. */
  readonly buyReview: BuyReview
  /** The total budget above which a buy is reviewed (`buyReview: 'over_budget'`). */
  readonly reviewBudgetThreshold: number
  /** How long a review takes, seconds. */
  readonly reviewSeconds: number
  /**
   * The review refuses a buy whose total budget is above this (the buyer's credit limit): its task ends
   * `failed` with BUDGET_EXCEEDED and nothing is booked. Unset: the review approves every buy.
   */
  readonly reviewCreditLimit?: number
  /**
   * The review asks the buyer for a purchase order number (`po_number`) before it books a buy whose total
   * budget is above this and whose request carried none: its task waits `input-required` (APPROVAL_REQUIRED, a
   * VALIDATION_ERROR on `po_number`) until the buyer answers with create_media_buy in the task's session
   * (`context_id`, or over A2A the same contextId) carrying one. Unset: no purchase order is asked for.
   */
  readonly reviewPoThreshold?: number
  /** Creatives in known formats: approved at once (`auto`) or after `reviewSeconds` (`manual`). */
  readonly creativeReview: 'auto' | 'manual'
  /** comply_test_controller is served (test only); otherwise it answers UNSUPPORTED_FEATURE. */
  readonly complyTestController: boolean
  /** Principals every account of which is sandbox (e.g. a compliance grader's token). */
  readonly sandboxPrincipals: readonly string[]
  /** Development only: webhook URLs may be plain http and reach loopback or private addresses. */
  readonly allowInsecureWebhookUrls: boolean
}
