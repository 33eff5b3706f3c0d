/**
 * Agent-level notification configs, as sync_principal and sync_agent_notification_configs store them (one
 * record per principal, `accounts/governance.ts`): capabilities.changed goes to every active entry that
 * lists it.
 */
import { AGENT_CONFIGS_KIND, type AgentConfigs } from '../accounts/governance.js'
import type { RecordStore } from '../storage/types.js'

/** The agent-level event type of a new capability snapshot. */
export const CAPABILITIES_CHANGED = 'capabilities.changed'

/** Every principal's agent-level configs, in registration order. */
export async function allAgentConfigs(records: RecordStore): Promise<AgentConfigs[]> {
  const all: AgentConfigs[] = []
  let afterSeq: number | undefined
  for (;;) {
    const page = await records.list<AgentConfigs>(AGENT_CONFIGS_KIND, {
      limit: 500,
      ...(afterSeq ? { afterSeq } : {}),
    })
    all.push(...page.map((row) => row.body))
    if (page.length < 500) return all
    afterSeq = page.at(-1)!.seq
  }
}
