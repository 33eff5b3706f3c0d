/**
 * sync_governance: the governance agent each account's buys are checked with, stored on the account (its
 * legacy credentials are kept, never echoed); agent-level notification configs for sync_principal and
 * sync_agent_notification_configs, one set per principal (record kind `agent_notification_configs`), which
 * the capabilities.changed event reads.
 */
import { AgentError, type TaskContext } from '@adwire/agent-server'
import { isoAt, isObject, ownerOf, type Seller } from '../seller.js'
import { AGENT_EVENT_TYPES, configProblem, normalizeConfigs } from './notification-configs.js'
import { ACCOUNT_KIND, resolveAccount } from './resolve.js'

export const AGENT_CONFIGS_KIND = 'agent_notification_configs'

/** One principal's agent-level registrations. */
export interface AgentConfigs {
  readonly principal_id: string
  readonly notification_configs: Record<string, unknown>[]
  readonly updated_at: string
}

/**
 * @example
 * await syncGovernance(seller, { accounts: [{ account, governance_agents: [{ url }] }] }, context)
 */
export async function syncGovernance(
  seller: Seller,
  request: Record<string, unknown>,
  context: TaskContext,
): Promise<Record<string, unknown>> {
  const owner = ownerOf(context)
  const results: Record<string, unknown>[] = []
  for (const entry of (request.accounts as unknown[]).filter(isObject)) {
    const account = await resolveAccount(seller, owner, entry.account)
    const agents = (Array.isArray(entry.governance_agents) ? entry.governance_agents : []).filter(isObject)
    await seller.records.put(ACCOUNT_KIND, account.account_id, owner, {
      ...account,
      governance_agents: agents,
      updated_at: isoAt(seller.now()),
    })
    results.push({
      account: entry.account,
      status: 'synced',
      ...(agents.length > 0
        ? { governance_agents: agents.map((agent) => ({ url: String(agent.url) })) }
        : {}),
    })
  }
  return { accounts: results }
}

/** Throws INVALID_REQUEST naming the field when an agent-level config set is not acceptable. */
export function checkAgentConfigs(configs: unknown, prefix: string): void {
  const problem = configProblem(configs, AGENT_EVENT_TYPES)
  if (problem)
    throw new AgentError('INVALID_REQUEST', problem.message, {
      field: `${prefix}${problem.field}`,
      status: 400,
    })
}

/** Replaces the caller's agent-level configs; resolves with what is stored. */
export async function putAgentConfigs(
  seller: Seller,
  context: TaskContext,
  configs: Record<string, unknown>[],
): Promise<AgentConfigs> {
  const owner = ownerOf(context)
  const stored: AgentConfigs = {
    principal_id: owner,
    notification_configs: normalizeConfigs(configs),
    updated_at: isoAt(seller.now()),
  }
  await seller.records.put(AGENT_CONFIGS_KIND, owner, owner, stored)
  return stored
}
