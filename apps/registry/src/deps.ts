/**
 * What the app is composed of: the repository, the crawler, the authenticator, the clock and the log. Built
 * from the environment by service.ts; tests build it the same way.
 */
import type { Context } from 'hono'
import type { RegistryRepository } from './db/repository.js'
import type { Crawler } from './crawl/crawler.js'
import type { FeedHub } from './feed/hub.js'
import type { MembershipTier } from './domain/membership.js'
import type { ComplianceRunLauncher } from './compliance/contract.js'
import type { AgentCredentialStore } from './compliance/credentials.js'
import type { ComplianceStatusService } from './compliance/status.js'

/** Who sent a request to a locked endpoint (the auth module's principal). */
export interface Principal {
  readonly kind: 'org' | 'user'
  readonly id: string
  readonly orgId?: string
  /** The organization's name as the credential's issuer knows it (names an auto-created organization). */
  readonly orgName?: string
}

/** Recognises the bearer credential of a request. */
export interface Authenticator {
  authenticate(request: Request): Promise<Principal | undefined>
}

export interface RegistryDeps {
  readonly repository: RegistryRepository
  readonly crawler: Crawler
  readonly auth: Authenticator
  readonly hub: FeedHub
  readonly now: () => number
  readonly log: (entry: Record<string, unknown>) => void
  /** `strict`: a response that does not match the OpenAPI document becomes a 500 (tests); `log`: logged. */
  readonly validateResponses: 'off' | 'log' | 'strict'
  readonly feedRetentionDays: number
  /** The membership tier of the registry's organizations (gates `public` member agents). */
  readonly memberTier: MembershipTier
  /** The static administrator bearer (`ADMIN_API_KEY`), when configured. */
  readonly adminApiKey?: string
  /** The registry's public base URL for this request (no trailing slash). */
  readonly publicUrl: (c: Context) => string
  /**
   * Agent Compliance. Status side: `outcomes` (the outcome sink, and status, verification, badges, settings
   * and monitoring read from it), `launcher` (starts heartbeat and refresh runs; absent: no monitoring) and
   * `credentials` (agent credentials sealed at rest; the runs side reads them as an `AgentCredentialSource`).
   */
  readonly compliance?: {
    readonly outcomes?: ComplianceStatusService
    readonly launcher?: ComplianceRunLauncher
    readonly credentials?: AgentCredentialStore
  }
}
