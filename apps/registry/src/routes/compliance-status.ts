/**
 * Agent Compliance, status side: every route of one agent's compliance status, composed by subject in the
 * order they match: detail and verification, badges, the owner's settings (lifecycle, opt-out, monitoring),
 * the monitoring log and refresh, and the agent credentials.
 */
import { Hono } from 'hono'
import type { RegistryDeps } from '../deps.js'
import { complianceBadgeRoutes } from './compliance-badges.js'
import { complianceCredentialRoutes } from './compliance-credentials.js'
import { complianceDetailRoutes } from './compliance-detail.js'
import { complianceMonitoringRoutes } from './compliance-monitoring.js'
import { complianceSettingsRoutes } from './compliance-settings.js'

/**
 * The compliance status routes of the registry.
 *
 * @example
 * app.route('/', complianceStatusRoutes(deps))
 */
export function complianceStatusRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()
  app.route('/', complianceDetailRoutes(deps))
  app.route('/', complianceBadgeRoutes(deps))
  app.route('/', complianceSettingsRoutes(deps))
  app.route('/', complianceMonitoringRoutes(deps))
  app.route('/', complianceCredentialRoutes(deps))
  return app
}
