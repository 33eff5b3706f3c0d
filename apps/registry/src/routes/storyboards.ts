/**
 * The storyboard catalog (`/api/storyboards…`, from the vendored 3.1.19 bundle through `@adwire/storyboards`) and
 * the registry's public signing keys (`/api/.well-known/jwks.json`).
 */
import { Hono } from 'hono'
import type { JWK } from 'jose'
import {
  catalogEntries,
  complianceTarget,
  detailOf,
  findStoryboard,
  stepOf,
  storyboardBundle,
  summaryOf,
  SUPPORTED_TARGETS,
  testKitOf,
} from '../compliance/runs-catalog.js'
import type { RegistryDeps } from '../deps.js'
import { HttpError, reply } from './http.js'

const target = (value: string | undefined): string => {
  const found = complianceTarget(value)
  if (!found) {
    throw new HttpError(
      400,
      'unsupported_compliance_target',
      `compliance_target ${value} is not served here; this registry serves ${SUPPORTED_TARGETS}`,
      { details: { parameter: 'compliance_target' } },
    )
  }
  return found
}

/** The catalog and JWKS routes; `publicKeys` gives the registry's public signing keys. */
export function storyboardRoutes(deps: RegistryDeps, publicKeys: () => Promise<readonly JWK[]>): Hono {
  const app = new Hono()

  app.get('/api/storyboards', (c) => {
    const requested = target(c.req.query('compliance_target'))
    const category = c.req.query('category')?.trim()
    const storyboards = catalogEntries()
      .map(summaryOf)
      .filter((summary) => !category || summary.category === category)
    return reply(c, deps, 'listStoryboards', {
      adcp_version: storyboardBundle().version,
      requested_compliance_target: requested,
      storyboards,
      count: storyboards.length,
    })
  })

  app.get('/api/storyboards/:id', (c) => {
    const requested = target(c.req.query('compliance_target'))
    const entry = findStoryboard(c.req.param('id'))
    if (!entry) throw new HttpError(404, 'storyboard_not_found', `no storyboard ${c.req.param('id')}`)
    const kit = testKitOf(entry)
    return reply(c, deps, 'getStoryboard', {
      adcp_version: storyboardBundle().version,
      requested_compliance_target: requested,
      storyboard: detailOf(entry),
      ...(kit !== undefined ? { test_kit: kit } : {}),
    })
  })

  app.get('/api/storyboards/:storyboardId/first-step', (c) => {
    const requested = target(c.req.query('compliance_target'))
    const entry = findStoryboard(c.req.param('storyboardId'))
    if (!entry)
      throw new HttpError(404, 'storyboard_not_found', `no storyboard ${c.req.param('storyboardId')}`)
    const phase = entry.storyboard.phases.find((candidate) => candidate.steps.length > 0)
    if (!phase)
      throw new HttpError(404, 'storyboard_has_no_steps', `storyboard ${entry.storyboard.id} has no steps`)
    const step = phase.steps[0]!
    return reply(c, deps, 'getStoryboardFirstStep', {
      adcp_version: storyboardBundle().version,
      requested_compliance_target: requested,
      storyboard: { id: entry.storyboard.id, title: entry.storyboard.title ?? entry.storyboard.id },
      step: {
        ...stepOf(step),
        phase_id: phase.id,
        phase_title: phase.title ?? phase.id,
        ...(step.sample_request ? { sample_request: step.sample_request } : {}),
        validations: step.validations ?? [],
      },
    })
  })

  app.get('/api/.well-known/jwks.json', async (c) =>
    reply(c, deps, 'getJwks', { keys: (await publicKeys()).map((key) => ({ ...key })) }),
  )

  return app
}
