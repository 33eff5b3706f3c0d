/** What every domain operation of the seller is given: its records, products, event seam, clock and settings. */
import type { TaskContext, TaskUpdates, TaskWebhooks } from '@adwire/agent-server'
import { AgentError } from '@adwire/agent-server'
import { isKitKeyPrincipal, type TestKitCredential } from './auth/test-kits.js'
import type { ProductSource } from './catalog/product-source.js'
import type { DeliveryModel } from './delivery/simulate.js'
import type { SellerSettings } from './settings.js'
import type { SellerEvents } from './events/seller-events.js'
import type { SellerPlatform } from './platform.js'
import type { RecordStore } from './storage/index.js'

export interface Seller {
  readonly records: RecordStore
  readonly products: ProductSource
  /** The ad server's delivery per package and day (the adapter's). */
  readonly delivery: DeliveryModel
  /** The ad server's booking and creative review (each method optional; called outside any transaction). */
  readonly platform: SellerPlatform
  readonly events: SellerEvents
  readonly env: SellerSettings
  readonly kits: readonly TestKitCredential[]
  /** Unix seconds. */
  readonly now: () => number
  readonly background: (work: () => Promise<void>) => void
  readonly log: (entry: Record<string, unknown>) => void
  /**
   * The status pushes of a stored task (its registrations as the call gave them), from `lastStatus`, the last
   * status the buyer was pushed: any instance, and this one after a restart (AgentServer.resumeUpdates).
   */
  readonly resumeUpdates: (taskId: string, webhooks: TaskWebhooks, lastStatus: string) => TaskUpdates
  /**
   * The idempotency replay window (capabilities' `replay_ttl_seconds`), seconds: a create's idempotency key
   * used again after it names a new buy. Default 86,400.
   */
  readonly replayTtlSeconds?: number
}

/** The caller of a protected task (the task server has authenticated it). */
export function ownerOf(context: TaskContext): string {
  if (!context.principal) throw new AgentError('AUTH_MISSING', 'this task needs credentials', { status: 401 })
  return context.principal.principal_id
}

/** Whether the caller authenticated with a live test-kit key (its accounts are never sandbox). */
export function isLivePrincipal(seller: Seller, principalId: string): boolean {
  return seller.kits.some((kit) => kit.live && isKitKeyPrincipal(kit, principalId))
}

/**
 * Whether every account of the caller is sandbox by the seller's own configuration: a sandbox test-kit key, or
 * a principal the operator listed in SANDBOX_PRINCIPALS.
 */
export function isSandboxPrincipal(seller: Seller, principalId: string): boolean {
  return (
    seller.env.sandboxPrincipals.includes(principalId) ||
    seller.kits.some((kit) => !kit.live && isKitKeyPrincipal(kit, principalId))
  )
}

/** The seller clock as an ISO 8601 timestamp (second precision). */
export const isoAt = (seconds: number) =>
  new Date(Math.floor(seconds) * 1000).toISOString().replace('.000Z', 'Z')

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A fresh identifier with a prefix (`mb_…`, `pkg_…`). */
export const newId = (prefix: string) => `${prefix}_${crypto.randomUUID().replaceAll('-', '').slice(0, 20)}`
