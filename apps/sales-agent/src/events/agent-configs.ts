/**
 * Agent-level notification configs (the seed's sync_principal `configuration.notification_configs[]` and
 * sync_agent_notification_configs `notification_configs[]`): one record per principal, replaced as a whole
 * by each sync. capabilities.changed goes to every active entry that lists it.
 */
import type { RecordStore } from '../storage/types.js'

export const AGENT_CONFIGS_KIND = 'agent_notification_configs'
/** The agent-level event type of a new capability snapshot. */
export const CAPABILITIES_CHANGED = 'capabilities.changed'

export interface AgentConfigs {
  readonly principal_id: string
  readonly notification_configs: Record<string, unknown>[]
}

/** Replaces a principal's agent-level configs (what the sync tasks store). */
export async function putAgentConfigs(
  records: RecordStore,
  principalId: string,
  configs: readonly Record<string, unknown>[],
): Promise<void> {
  await records.put(AGENT_CONFIGS_KIND, principalId, principalId, {
    principal_id: principalId,
    notification_configs: [...configs],
  } satisfies AgentConfigs)
}

/** A principal's agent-level configs ([] when none). */
export async function agentConfigsOf(
  records: RecordStore,
  principalId: string,
): Promise<Record<string, unknown>[]> {
  return (await records.get<AgentConfigs>(AGENT_CONFIGS_KIND, principalId))?.body.notification_configs ?? []
}

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
