/** What every creative handler is given besides its input. */
import type { CreativeAgentRef, FormatCatalog } from '@adwire/formats'
import type { PreviewStore } from './preview-store.js'

/** Another creative agent this agent points buyers at (`creative_agents` in list_creative_formats). */
export type { CreativeAgentRef } from '@adwire/formats'

export interface CreativeContext {
  /** The agent's public base URL: every format_id's agent_url, and the base of preview URLs. */
  agentUrl: string
  /** The current time (expiry of previews). */
  now: Date
  /** The formats served; the standard catalog for `agentUrl` when omitted. */
  catalog?: FormatCatalog
  /** Other creative agents to list in list_creative_formats. */
  creativeAgents?: readonly CreativeAgentRef[]
  /** Where URL previews are kept; the process-wide default store when omitted. */
  previews?: PreviewStore
}
