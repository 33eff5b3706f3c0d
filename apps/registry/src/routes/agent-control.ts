/**
 * Proof of control of an agent URL (an adwire addition outside the API document, README "Ownership"):
 * `POST /api/registry/agents/{encodedUrl}/control/verify` fetches the agent's own control file
 * (`<agent origin>/.well-known/adcp-agent-control.json`, `{"organization_id": "org_…"}`, SSRF-safe, no redirect)
 * and, when it names the caller's organization, records that organization as the agent's controller: from then on
 * only it changes what the agent's listing means for everyone (compliance opt-out, lifecycle, monitoring).
 */
import { Hono } from 'hono'
import { agentController, verifyAgentControl } from '../auth/authorize.js'
import type { RegistryDeps } from '../deps.js'
import { agentUrlParam, requirePrincipal } from './http.js'

/** The agent-control routes. */
export function agentControlRoutes(deps: RegistryDeps): Hono {
  const app = new Hono()
  app.post('/api/registry/agents/:encodedUrl/control/verify', async (c) => {
    await requirePrincipal(c, deps)
    const agentUrl = agentUrlParam(c.req.param('encodedUrl'), 'encodedUrl')
    const result = await verifyAgentControl(c, deps, agentUrl)
    const controller = await agentController(deps, agentUrl)
    return c.json({
      agent_url: agentUrl,
      ...result,
      controller: controller ? { organization_id: controller.orgId, proof: controller.proof } : null,
    })
  })
  return app
}
