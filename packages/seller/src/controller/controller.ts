/**
 * comply_test_controller: sandbox accounts only, as the seller's records hold them (a request's own
 * `account.sandbox: true` proves nothing): a live test-kit key, or a caller without a sandbox account, gets
 * FORBIDDEN before any scenario runs, and every scenario acts only on the caller's sandbox records (a live buy,
 * account or creative of the caller is FORBIDDEN; another caller's is NOT_FOUND). list_scenarios, the force_* transitions (creative, account and
 * media buy status, creative purge, the forced create arm and its completion), simulate_delivery and
 * simulate_budget_spend on the delivery clock, and the seed_* scenarios (seed.ts). State machine violations are
 * INVALID_TRANSITION, unknown entities NOT_FOUND, unknown scenarios UNKNOWN_SCENARIO; every change goes
 * through the same domain code (and event seam) as buyer calls.
 */
import type { TaskContext } from '@adwire/agent-server'
import { ACCOUNT_KIND, naturalAccountId } from '../accounts/resolve.js'
import { moveTask, pushTaskStatus, TASK_KIND, type TaskRecord } from '../async/task-records.js'
import type { AccountRecord } from '../accounts/types.js'
import { setCreativeStatus } from '../creatives/library.js'
import { CREATIVE_KIND, creativeKey } from '../creatives/lookup.js'
import type { CreativeRecord, CreativeStatus } from '../creatives/types.js'
import { announce, reconcileBuys } from '../media-buys/reconcile.js'
import { BUY_KIND, mutateBuy } from '../media-buys/repository.js'
import { canTransition } from '../media-buys/state-machine.js'
import { setStatus } from '../media-buys/status.js'
import type { MediaBuyRecord, MediaBuyStatus } from '../media-buys/types.js'
import { FORCED_ARM_KIND } from '../media-buys/create.js'
import { isLivePrincipal, isoAt, isObject, isSandboxPrincipal, ownerOf, type Seller } from '../seller.js'
import { controllerError, transitioned, type ControllerAnswer } from './answers.js'
import { CONTROLLER_SCENARIOS, UPSTREAM_KIND } from './scenarios.js'
import { runSeed } from './seed.js'
import { officialProblem } from '../validation/official.js'
import { lastReportedWindow } from '../events/delivery-reports.js'

type Params = Record<string, unknown>

const LIVE = (what: string) =>
  controllerError('FORBIDDEN', `${what} is live; comply_test_controller acts on sandbox accounts only`)

async function isSandboxAccount(seller: Seller, owner: string, accountId: string): Promise<boolean> {
  const stored = await seller.records.get<AccountRecord>(ACCOUNT_KIND, accountId)
  return stored?.owner === owner && stored.body.sandbox
}

/**
 * Whether a creative of the caller is in its sandbox: every creative of a sandbox principal is; another
 * caller's creative is when its account is sandbox, or, held in the library without an account, when no live buy
 * of the caller uses it.
 */
async function creativeInSandbox(seller: Seller, owner: string, creative: CreativeRecord): Promise<boolean> {
  if (isSandboxPrincipal(seller, owner)) return true
  if (creative.account_id !== undefined) return isSandboxAccount(seller, owner, creative.account_id)
  const buys = await seller.records.list<MediaBuyRecord>(BUY_KIND, { owner })
  return !buys.some(
    ({ body }) =>
      !body.sandbox &&
      body.packages.some((pkg) =>
        pkg.creative_assignments.some((assignment) => assignment.creative_id === creative.creative_id),
      ),
  )
}

async function forceCreative(seller: Seller, owner: string, params: Params): Promise<ControllerAnswer> {
  const id = String(params.creative_id)
  const stored = await seller.records.get<CreativeRecord>(CREATIVE_KIND, creativeKey(owner, id))
  if (!stored || stored.body.purged_at) return controllerError('NOT_FOUND', `no creative ${id}`, null)
  if (!(await creativeInSandbox(seller, owner, stored.body))) return LIVE(`creative ${id}`)
  const previous = stored.body.status
  const reason = typeof params.rejection_reason === 'string' ? params.rejection_reason : undefined
  const creative = await setCreativeStatus(seller, owner, id, params.status as CreativeStatus, reason)
  return transitioned(previous, creative.status)
}

async function purgeCreative(seller: Seller, owner: string, params: Params): Promise<ControllerAnswer> {
  const id = String(params.creative_id)
  const key = creativeKey(owner, id)
  const stored = await seller.records.get<CreativeRecord>(CREATIVE_KIND, key)
  if (!stored || stored.body.purged_at) return controllerError('NOT_FOUND', `no creative ${id}`, null)
  if (!(await creativeInSandbox(seller, owner, stored.body))) return LIVE(`creative ${id}`)
  const kind = params.purge_kind === 'hard' ? 'hard' : 'soft'
  const purged: CreativeRecord = {
    ...stored.body,
    purged_at: isoAt(seller.now()),
    purge_reason_code: typeof params.reason_code === 'string' ? params.reason_code : 'advertiser_request',
  }
  // The buys using it see it purged (their impairments) before a hard purge removes it from the library; the
  // purge, the settled buys and their pushes commit together (a concurrent purge of it loses and says so).
  const won = await seller.records.transaction(async () => {
    if (!(await seller.records.update(CREATIVE_KIND, key, stored.revision, purged))) return false
    await reconcileBuys(seller, owner, new Set([id]))
    if (kind === 'hard') await seller.records.delete(CREATIVE_KIND, key)
    await seller.events.creativePurged(purged, kind)
    return true
  })
  if (!won) return controllerError('NOT_FOUND', `creative ${id} changed meanwhile`, null)
  return transitioned(stored.body.status, 'purged', `creative ${id} ${kind}-purged`)
}

async function forceAccount(seller: Seller, owner: string, params: Params): Promise<ControllerAnswer> {
  const id = String(params.account_id)
  const stored = await seller.records.get<AccountRecord>(ACCOUNT_KIND, id)
  if (!stored || stored.owner !== owner) return controllerError('NOT_FOUND', `no account ${id}`, null)
  if (!stored.body.sandbox) return LIVE(`account ${id}`)
  const previous = stored.body.status
  const account = { ...stored.body, status: String(params.status), updated_at: isoAt(seller.now()) }
  // The status and its account.status_changed pushes commit together; of two concurrent changes one wins.
  const won = await seller.records.transaction(async () => {
    if (!(await seller.records.update(ACCOUNT_KIND, id, stored.revision, account))) return false
    if (previous !== account.status) await seller.events.accountStatusChanged(account, previous)
    return true
  })
  if (!won) return forceAccount(seller, owner, params)
  return transitioned(previous, account.status)
}

async function forceMediaBuy(seller: Seller, owner: string, params: Params): Promise<ControllerAnswer> {
  const id = String(params.media_buy_id)
  const stored = await seller.records.get<MediaBuyRecord>(BUY_KIND, id)
  if (!stored || stored.owner !== owner) return controllerError('NOT_FOUND', `no media buy ${id}`, null)
  if (!stored.body.sandbox) return LIVE(`media buy ${id}`)
  const to = params.status as MediaBuyStatus
  if (!canTransition(stored.body.status, to))
    return controllerError(
      'INVALID_TRANSITION',
      `a ${stored.body.status} buy cannot become ${to}`,
      stored.body.status,
    )
  const previous = stored.body.status
  const now = seller.now()
  // The status and every push it causes commit together; a buy that moved meanwhile is checked again.
  const outcome = await seller.records.transaction(async () => {
    let from: MediaBuyStatus | undefined
    const { buy } = await mutateBuy(seller.records, owner, id, (draft) => {
      from = draft.status
      if (!canTransition(draft.status, to)) return
      setStatus(draft, to, now, 'controller')
      if (to === 'rejected' && typeof params.rejection_reason === 'string')
        draft.rejection_reason = params.rejection_reason
      if (to === 'canceled') draft.cancellation = { canceled_at: isoAt(now), canceled_by: 'seller' }
    })
    await announce(seller, buy, from, 'controller')
    return { from: from ?? previous, buy }
  })
  if (outcome.buy.status !== to)
    return controllerError(
      'INVALID_TRANSITION',
      `a ${outcome.from} buy cannot become ${to}`,
      outcome.buy.status,
    )
  return transitioned(outcome.from, outcome.buy.status)
}

async function simulate(
  seller: Seller,
  owner: string,
  scenario: string,
  params: Params,
): Promise<ControllerAnswer> {
  let ids: string[] = typeof params.media_buy_id === 'string' ? [params.media_buy_id] : []
  if (ids.length === 0 && typeof params.account_id === 'string')
    ids = (await seller.records.list<MediaBuyRecord>(BUY_KIND, { owner }))
      .filter((stored) => stored.body.account_id === params.account_id && stored.body.sandbox)
      .map((stored) => stored.id)
  if (ids.length === 0) return controllerError('NOT_FOUND', 'no media buy to simulate on', null)
  const added = { impressions: 0, clicks: 0, spend: 0, conversions: 0 }
  let cumulative = { ...added }
  for (const id of ids) {
    const stored = await seller.records.get<MediaBuyRecord>(BUY_KIND, id)
    if (!stored || stored.owner !== owner) return controllerError('NOT_FOUND', `no media buy ${id}`, null)
    if (!stored.body.sandbox) return LIVE(`media buy ${id}`)
    // Simulated delivery is the upstream's late count for the period already reported, if any (restating
    // it: an adjusted report); before the first report it counts now. Budget spend always counts now.
    const now = seller.now()
    const restates =
      scenario === 'simulate_delivery' ? await lastReportedWindow(seller.records, id) : undefined
    // The simulated delivery and the reports it makes due commit together.
    const buy = await seller.records.transaction(async () => {
      const { buy } = await mutateBuy(seller.records, owner, id, (draft) => {
        const current = draft.simulated ?? { impressions: 0, clicks: 0, spend: 0, conversions: 0 }
        const spend =
          scenario === 'simulate_budget_spend'
            ? (draft.total_budget * Number(params.spend_percentage ?? 0)) / 100
            : isObject(params.reported_spend)
              ? Number(params.reported_spend.amount ?? 0)
              : 0
        added.impressions = Number(params.impressions ?? 0)
        added.clicks = Number(params.clicks ?? 0)
        added.conversions = Number(params.conversions ?? 0)
        added.spend = spend
        draft.simulated = {
          impressions: current.impressions + added.impressions,
          clicks: current.clicks + added.clicks,
          spend: current.spend + spend,
          conversions: current.conversions + added.conversions,
        }
        // A buy simulated on before the log began: its earlier total counts from then on.
        const log =
          draft.simulated_log ??
          (current.impressions || current.spend || current.clicks
            ? [
                {
                  at: now,
                  recorded_at: now,
                  impressions: current.impressions,
                  clicks: current.clicks,
                  spend: current.spend,
                },
              ]
            : [])
        draft.simulated_log = [
          ...log,
          {
            at: restates?.end ?? now,
            recorded_at: now,
            impressions: added.impressions,
            clicks: added.clicks,
            spend,
          },
        ]
      })
      await seller.events.deliveryAdvanced(buy)
      return buy
    })
    cumulative = { ...buy.simulated! }
  }
  return {
    success: true,
    simulated:
      scenario === 'simulate_budget_spend'
        ? { spend_percentage: params.spend_percentage, spend: added.spend }
        : added,
    ...(scenario === 'simulate_delivery' ? { cumulative } : {}),
  }
}

/**
 * Whether this caller may drive the controller: the seller must hold the targeted account as sandbox. Every
 * account of a sandbox principal is; another caller names one of its sandbox accounts in `account` (an
 * account_id, or a natural key) or, naming none, holds at least one. Live test-kit keys are refused first.
 */
async function gate(seller: Seller, owner: string, request: Params): Promise<ControllerAnswer | undefined> {
  if (isLivePrincipal(seller, owner))
    return controllerError(
      'FORBIDDEN',
      'comply_test_controller requires a sandbox account; this caller is live',
    )
  if (isSandboxPrincipal(seller, owner)) return undefined
  const ref = isObject(request.account) ? request.account : {}
  const named =
    typeof ref.account_id === 'string'
      ? ref.account_id
      : isObject(ref.brand)
        ? naturalAccountId(owner, ref)
        : undefined
  const sandbox =
    named !== undefined
      ? await isSandboxAccount(seller, owner, named)
      : (await seller.records.list<AccountRecord>(ACCOUNT_KIND, { owner })).some(({ body }) => body.sandbox)
  if (sandbox) return undefined
  return controllerError(
    'FORBIDDEN',
    named !== undefined
      ? `comply_test_controller requires a sandbox account; ${named} is not a sandbox account of this caller in the seller's records`
      : "comply_test_controller requires a sandbox account; this caller holds none in the seller's records (sync_accounts one with sandbox: true first)",
  )
}

/**
 * @example
 * await complyTestController(seller, { scenario: 'list_scenarios', account: { sandbox: true } }, context)
 */
export async function complyTestController(
  seller: Seller,
  request: Params,
  context: TaskContext,
): Promise<ControllerAnswer> {
  const owner = ownerOf(context)
  const denied = await gate(seller, owner, request)
  if (denied) return denied
  const scenario = String(request.scenario)
  const params = isObject(request.params) ? request.params : {}
  const invalid = officialProblem('compliance/comply-test-controller-request.json', request)
  if (invalid) return controllerError('INVALID_PARAMS', invalid.message)
  switch (scenario) {
    case 'list_scenarios':
      return { success: true, scenarios: [...CONTROLLER_SCENARIOS] }
    case 'force_creative_status':
      return forceCreative(seller, owner, params)
    case 'force_creative_purge':
      return purgeCreative(seller, owner, params)
    case 'force_account_status':
      return forceAccount(seller, owner, params)
    case 'force_media_buy_status':
      return forceMediaBuy(seller, owner, params)
    case 'force_create_media_buy_arm': {
      const forced = {
        arm: String(params.arm),
        ...(typeof params.task_id === 'string' ? { task_id: params.task_id } : {}),
      }
      if (forced.arm !== 'submitted')
        return controllerError('INVALID_PARAMS', 'only the submitted arm is supported')
      const held = forced.task_id ? await seller.records.get(TASK_KIND, forced.task_id) : undefined
      if (held && held.owner !== owner)
        return controllerError('FORBIDDEN', `task id ${forced.task_id} is taken; choose another`)
      await seller.records.put(FORCED_ARM_KIND, owner, owner, forced)
      return {
        success: true,
        forced,
        message: 'the next create_media_buy from this caller answers submitted',
      }
    }
    case 'force_task_completion': {
      // The forced task is stored: any instance completes it, after a restart too (one caller wins the move).
      const taskId = String(params.task_id)
      const stored = await seller.records.get<TaskRecord>(TASK_KIND, taskId)
      const result = isObject(params.result) ? params.result : {}
      // The task's move and its status push commit together.
      const moved =
        stored?.body.forced === true &&
        stored.owner === owner &&
        (await seller.records.transaction(async () => {
          if (!(await moveTask(seller, taskId, 'submitted', 'completed', result))) return false
          await pushTaskStatus(seller, taskId)
          return true
        }))
      if (!moved) return controllerError('NOT_FOUND', `no forced task ${taskId} awaits completion`, null)
      return transitioned('submitted', 'completed')
    }
    case 'force_upstream_unavailable': {
      // The named tool answers from its (stale) cache with a STALE_RESPONSE advisory until the record goes.
      const tool = typeof params.tool === 'string' ? params.tool : 'get_products'
      const upstream = typeof params.upstream_name === 'string' ? params.upstream_name : 'inventory-service'
      // duration_seconds (an extension): the upstream comes back after it; otherwise it stays down.
      const duration = Number(params.duration_seconds)
      const since = seller.now()
      await seller.records.put(UPSTREAM_KIND, `${owner}/${tool}`, owner, {
        tool,
        upstream,
        since,
        ...(duration > 0 ? { until: since + duration } : {}),
      })
      return transitioned('available', 'unavailable', `${upstream} is unreachable for ${tool}`)
    }
    case 'simulate_delivery':
    case 'simulate_budget_spend':
      return simulate(seller, owner, scenario, params)
    default:
      return (
        (await runSeed(seller, owner, scenario, params)) ??
        controllerError('UNKNOWN_SCENARIO', `scenario ${scenario} is not implemented`)
      )
  }
}
