/** An account as the sales agent stores it (one record of kind `account`). */

export interface AccountRecord {
  readonly account_id: string
  readonly owner: string
  readonly brand: Record<string, unknown>
  readonly operator?: string
  billing?: string
  payment_terms?: string
  status: string
  sandbox: boolean
  /** core/notification-config.json registrations for account-level events. */
  notification_configs: Record<string, unknown>[]
  governance_agents: Record<string, unknown>[]
  readonly created_at: string
  updated_at: string
}
