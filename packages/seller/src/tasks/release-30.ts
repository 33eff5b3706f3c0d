/**
 * Answers a 3.0-era buyer in shapes both releases accept. A request that pins only the deprecated
 * `adcp_major_version` (3.0 had no `adcp_version`; a 3.1 buyer sends both) comes from a client that validates
 * against the 3.0 schemas, whose closed enums 3.1 widened: `valid_actions` (the deprecated flat list; 3.1's
 * `available_actions` keeps every action) and `compliance_testing.scenarios`. Such a caller gets those lists cut
 * to the 3.0 vocabulary; everything else is the 3.1 answer, which 3.0's open objects accept. Its requests may
 * carry what 3.0 had and 3.1.19 dropped without changing the meaning (see {@link from30}); a 3.1 caller's request
 * is checked as it came.
 */

/** `enums/media-buy-valid-action.json` of 3.0. */
const VALID_ACTIONS_30 = new Set([
  'pause',
  'resume',
  'cancel',
  'update_budget',
  'update_dates',
  'update_packages',
  'add_packages',
  'sync_creatives',
])

/** `compliance_testing.scenarios` of 3.0's get_adcp_capabilities response. */
const SCENARIOS_30 = new Set([
  'force_creative_status',
  'force_account_status',
  'force_media_buy_status',
  'force_session_status',
  'simulate_delivery',
  'simulate_budget_spend',
])

type Body = Record<string, unknown>

const isObject = (value: unknown): value is Body =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Whether the request comes from a 3.0-era buyer: `adcp_major_version` without `adcp_version`. */
export function speaks30(request: Body): boolean {
  return request.adcp_major_version !== undefined && request.adcp_version === undefined
}

const only = (list: unknown, allowed: Set<string>) =>
  Array.isArray(list) ? list.filter((entry) => typeof entry === 'string' && allowed.has(entry)) : list

function buyFor30(buy: Body): Body {
  return Array.isArray(buy.valid_actions)
    ? { ...buy, valid_actions: only(buy.valid_actions, VALID_ACTIONS_30) }
    : buy
}

/**
 * The response cut to 3.0's closed enums (a new object; the 3.1 answer is untouched).
 *
 * @example
 * for30({ media_buy_id: 'mb_1', valid_actions: ['pause', 'update_pacing'] }) // valid_actions: ['pause']
 */
export function for30(response: Body): Body {
  let out = buyFor30(response)
  if (Array.isArray(out.media_buys))
    out = { ...out, media_buys: out.media_buys.map((buy) => (isObject(buy) ? buyFor30(buy) : buy)) }
  if (isObject(out.compliance_testing) && Array.isArray(out.compliance_testing.scenarios)) {
    const scenarios = only(out.compliance_testing.scenarios, SCENARIOS_30) as string[]
    // 3.0 wants at least one scenario; a controller with none of 3.0's is not advertised to a 3.0 buyer.
    if (scenarios.length > 0) out = { ...out, compliance_testing: { ...out.compliance_testing, scenarios } }
    else {
      const { compliance_testing: _dropped, ...rest } = out
      out = rest
    }
  }
  return out
}

const governanceAgentFor31 = (agent: unknown): unknown => {
  if (!isObject(agent) || !('categories' in agent)) return agent
  const { categories: _categories, ...rest } = agent
  return rest
}

/**
 * A 3.0-era request in its 3.1.19 shape: sync_governance's `governance_agents[].categories` (3.0 let several
 * agents split the categories; 3.1.19 has one agent, which handles them all, as 3.0 read an omitted list) is
 * dropped. Everything else, `governance_agents`' single entry included, is checked as 3.1.19 has it.
 *
 * @example
 * from30({ accounts: [{ governance_agents: [{ url, authentication, categories: ['budget_authority'] }] }] })
 * // governance_agents: [{ url, authentication }]
 */
export function from30(request: Body): Body {
  if (!Array.isArray(request.accounts)) return request
  const accounts = request.accounts.map((account) =>
    isObject(account) && Array.isArray(account.governance_agents)
      ? { ...account, governance_agents: account.governance_agents.map(governanceAgentFor31) }
      : account,
  )
  return { ...request, accounts }
}
