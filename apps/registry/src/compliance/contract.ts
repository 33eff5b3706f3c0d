/**
 * The seam between the two halves of Agent Compliance: the runs (storyboards executed by @adwire/storyboards
 * against a registered agent, stored with per-step results) and the status side (compliance status,
 * verification, badges, lifecycle, monitoring). The runs side reports each finished storyboard to an
 * `ComplianceOutcomeSink`; the status side starts runs (heartbeats, refresh) through a `ComplianceRunLauncher`
 * and reads an agent's saved credentials through an `AgentCredentialSource`.
 */

/** How one storyboard ended for one agent in one run. */
export interface StoryboardOutcome {
  readonly runId: string
  /** The agent's URL as registered (the `encodedUrl` path segment, decoded). */
  readonly agentUrl: string
  readonly storyboardId: string
  /** The AdCP version the storyboard bundle belongs to (e.g. `3.1.19`). */
  readonly adcpVersion: string
  readonly status: 'passed' | 'failed' | 'partial' | 'error'
  /** What started the run. */
  readonly trigger: 'manual' | 'heartbeat' | 'refresh' | 'step' | 'compare'
  readonly stepsPassed: number
  readonly stepsFailed: number
  readonly stepsSkipped: number
  /** ISO 8601 instants. */
  readonly startedAt: string
  readonly finishedAt: string
}

/** Where the runs side reports finished storyboards (the status side stores them). */
export interface ComplianceOutcomeSink {
  record(outcome: StoryboardOutcome): Promise<void>
}

/** How the status side starts runs (monitoring heartbeats, `refresh`). Returns at once with the run ids. */
export interface ComplianceRunLauncher {
  launch(
    agentUrl: string,
    options: { readonly trigger: 'heartbeat' | 'refresh'; readonly storyboardIds?: readonly string[] },
  ): Promise<{ readonly runIds: readonly string[] }>
}

/** The credentials a run presents to an agent (saved encrypted by the status side). */
export type AgentCredential =
  | { readonly type: 'bearer'; readonly token: string }
  | {
      readonly type: 'oauth_client_credentials'
      readonly tokenEndpoint: string
      readonly clientId: string
      readonly clientSecret: string
      readonly scope?: string
    }

export interface AgentCredentialSource {
  /**
   * The credential a run presents to the agent: `orgId`'s own when the run is an organization's, else (a
   * heartbeat) the one the agent's controller saved. Never another organization's.
   */
  credentialFor(agentUrl: string, orgId?: string): Promise<AgentCredential | undefined>
}
