/** The comply_test_controller scenarios this agent implements (advertised in compliance_testing.scenarios). */
export const CONTROLLER_SCENARIOS = [
  'list_scenarios',
  'force_creative_status',
  'force_creative_purge',
  'force_account_status',
  'force_media_buy_status',
  'force_create_media_buy_arm',
  'force_task_completion',
  'simulate_delivery',
  'simulate_budget_spend',
  'seed_product',
  'seed_pricing_option',
  'seed_creative',
  'seed_plan',
  'seed_media_buy',
  'seed_account',
  'seed_creative_format',
  'force_upstream_unavailable',
] as const

export type ControllerScenario = (typeof CONTROLLER_SCENARIOS)[number]

/** Where force_upstream_unavailable marks a caller's tool as served from a stale cache (`{owner}/{tool}`). */
export const UPSTREAM_KIND = 'upstream_unavailable'
