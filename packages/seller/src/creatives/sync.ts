/**
 * sync_creatives and list_creatives over the library (see library.ts): per-creative results (action, status,
 * errors), strict validation failing the whole sync on the first bad creative and lenient keeping the good ones,
 * dry runs storing nothing, bulk `assignments` to the caller's packages; the listing with filters, pagination,
 * a query summary and soft-purge tombstones.
 */
import { AgentError, type TaskContext } from '@adwire/agent-server'
import { resolveAccount } from '../accounts/resolve.js'
import { pageOf, pageResponse } from '../catalog/get-products.js'
import { reconcileBuys } from '../media-buys/reconcile.js'
import { isObject, ownerOf, type Seller } from '../seller.js'
import { assignCreative, scheduleReview, upsertCreative } from './library.js'
import { CREATIVE_KIND } from './lookup.js'
import type { CreativeRecord } from './types.js'

function problemOf(creative: Record<string, unknown>): string | undefined {
  if (!isObject(creative.format_id) || typeof creative.format_id.id !== 'string')
    return 'format_id must be a {agent_url, id} object'
  if (!isObject(creative.assets) || Object.keys(creative.assets).length === 0)
    return 'assets must hold at least one asset'
  return undefined
}

/**
 * @example
 * await syncCreatives(seller, { account, creatives: [...] , idempotency_key }, context)
 */
export async function syncCreatives(
  seller: Seller,
  request: Record<string, unknown>,
  context: TaskContext,
): Promise<Record<string, unknown>> {
  const owner = ownerOf(context)
  const account = await resolveAccount(seller, owner, request.account)
  const creatives = (request.creatives as Record<string, unknown>[]).filter(isObject)
  const lenient = request.validation_mode === 'lenient'
  const problems = creatives.map(problemOf)
  const firstBad = problems.findIndex((problem) => problem !== undefined)
  if (!lenient && firstBad !== -1)
    throw new AgentError('VALIDATION_ERROR', `creatives[${firstBad}]: ${problems[firstBad]!}`, {
      field: `creatives[${firstBad}]`,
      status: 400,
    })
  const results: Record<string, unknown>[] = []
  const changed = new Set<string>()
  for (const [index, creative] of creatives.entries()) {
    const id = String(creative.creative_id)
    if (problems[index]) {
      results.push({
        creative_id: id,
        action: 'failed',
        errors: [{ code: 'VALIDATION_ERROR', message: problems[index] }],
      })
      continue
    }
    if (request.dry_run === true) {
      results.push({ creative_id: id, action: 'unchanged' })
      continue
    }
    // The stored creative, its review and its creative.status_changed pushes commit together.
    const { action, stored } = await seller.records.transaction(async () => {
      const {
        action,
        creative: stored,
        from,
      } = await upsertCreative(seller, owner, creative, account.account_id)
      if (action === 'created' || (from !== undefined && from !== stored.status)) {
        changed.add(id)
        await seller.events.creativeStatusChanged(stored, from)
      }
      await scheduleReview(seller, owner, stored)
      return { action, stored }
    })
    results.push({ creative_id: id, action, status: stored.status })
  }
  if (request.dry_run !== true && Array.isArray(request.assignments))
    for (const assignment of request.assignments.filter(isObject)) {
      await assignCreative(seller, owner, {
        creative_id: String(assignment.creative_id),
        package_id: String(assignment.package_id),
        ...(typeof assignment.weight === 'number' ? { weight: assignment.weight } : {}),
      })
      changed.add(String(assignment.creative_id))
      const result = results.find((entry) => entry.creative_id === assignment.creative_id)
      if (result)
        result.assigned_to = [...((result.assigned_to as string[]) ?? []), String(assignment.package_id)]
    }
  if (changed.size > 0) await reconcileBuys(seller, owner, changed)
  return {
    ...(request.dry_run === true ? { dry_run: true } : {}),
    creatives: results,
    ...(account.sandbox ? { sandbox: true } : {}),
  }
}

function matches(creative: CreativeRecord, filters: Record<string, unknown>): boolean {
  const list = (name: string) =>
    Array.isArray(filters[name]) ? (filters[name] as unknown[]).map(String) : undefined
  const ids = list('creative_ids')
  if (ids && !ids.includes(creative.creative_id)) return false
  const statuses = list('statuses')
  if (statuses && !statuses.includes(creative.status)) return false
  if (
    typeof filters.name_contains === 'string' &&
    !(creative.name ?? '').toLowerCase().includes(filters.name_contains.toLowerCase())
  )
    return false
  const formats = Array.isArray(filters.format_ids) ? filters.format_ids.filter(isObject) : undefined
  if (formats && !formats.some((f) => f.id === creative.format_id.id)) return false
  return true
}

/**
 * @example
 * await listCreatives(seller, { filters: { statuses: ['approved'] } }, context)
 */
export async function listCreatives(
  seller: Seller,
  request: Record<string, unknown>,
  context: TaskContext,
): Promise<Record<string, unknown>> {
  const owner = ownerOf(context)
  const filters = isObject(request.filters) ? request.filters : {}
  const all = (await seller.records.list<CreativeRecord>(CREATIVE_KIND, { owner })).map(
    (stored) => stored.body,
  )
  const visible = all.filter((creative) => !creative.purged_at || request.include_purged === true)
  const matching = visible.filter((creative) => matches(creative, filters))
  const { limit, offset } = pageOf(request.pagination)
  const page = matching.slice(offset, offset + limit).map((creative) => ({
    creative_id: creative.creative_id,
    name: creative.name ?? creative.creative_id,
    format_id: creative.format_id,
    status: creative.status,
    created_date: creative.created_at,
    updated_date: creative.updated_at,
    ...(creative.assets ? { assets: creative.assets } : {}),
    ...(creative.tags ? { tags: creative.tags } : {}),
    ...(creative.purged_at
      ? {
          purge: {
            kind: 'soft',
            at: creative.purged_at,
            reason_code: creative.purge_reason_code ?? 'advertiser_request',
          },
        }
      : {}),
  }))
  return {
    query_summary: { total_matching: matching.length, returned: page.length },
    pagination: pageResponse(offset, limit, matching.length),
    creatives: page,
  }
}
