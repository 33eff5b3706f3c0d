/**
 * The seed_* scenarios of comply_test_controller: fixtures become products (and their pricing options),
 * creatives, formats, accounts, media buys and plans in the caller's sandbox, so storyboards can run against
 * known state. Seeds never touch what another principal or an anonymous caller sees: products and formats are
 * the caller's own (seen only in its sandbox), and an account, buy or plan id held by another principal or by a
 * live account is refused (FORBIDDEN), never overwritten. A malformed fixture is INVALID_PARAMS.
 */
import { standardCatalog } from '@adwire/formats'
import { ACCOUNT_KIND } from '../accounts/resolve.js'
import type { AccountRecord } from '../accounts/types.js'
import {
  PRODUCT_KIND,
  productFromFixture,
  seededProductKey,
  withPricingOption,
} from '../catalog/product-source.js'
import { upsertCreative } from '../creatives/library.js'
import { CREATIVE_KIND, creativeKey } from '../creatives/lookup.js'
import type { CreativeRecord } from '../creatives/types.js'
import { BUY_KIND } from '../media-buys/repository.js'
import type { MediaBuyRecord, MediaBuyStatus } from '../media-buys/types.js'
import { isoAt, isObject, newId, type Seller } from '../seller.js'
import { FORMAT_KIND } from '../tasks/product-tasks.js'
import { controllerError, type ControllerAnswer } from './answers.js'

type Params = Record<string, unknown>
const fixtureOf = (params: Params) => (isObject(params.fixture) ? params.fixture : {})

/** Refuses a seed whose id another principal holds, or that names a live record of the caller. */
async function taken(
  seller: Seller,
  owner: string,
  kind: string,
  id: string,
  what: string,
): Promise<ControllerAnswer | undefined> {
  const stored = await seller.records.get<{ sandbox?: boolean }>(kind, id)
  if (!stored || (stored.owner === owner && stored.body.sandbox !== false)) return undefined
  return controllerError(
    'FORBIDDEN',
    `${what} ${id} is not a sandbox ${what} of this caller; seeds never change another's or a live one`,
  )
}

async function seedProduct(seller: Seller, owner: string, params: Params): Promise<ControllerAnswer> {
  const id = String(params.product_id)
  const existing = await seller.products.get(id, owner)
  const product = productFromFixture(id, fixtureOf(params), seller.env.creativeAgentUrl, existing?.product)
  await seller.records.put(PRODUCT_KIND, seededProductKey(owner, id), owner, { product })
  return { success: true, message: `product ${id} seeded` }
}

async function seedPricingOption(seller: Seller, owner: string, params: Params): Promise<ControllerAnswer> {
  const id = String(params.product_id)
  const existing = await seller.products.get(id, owner)
  const base = existing?.product ?? productFromFixture(id, {}, seller.env.creativeAgentUrl)
  const product = withPricingOption(base, String(params.pricing_option_id), fixtureOf(params))
  await seller.records.put(PRODUCT_KIND, seededProductKey(owner, id), owner, { product })
  return { success: true, message: `pricing option ${String(params.pricing_option_id)} seeded on ${id}` }
}

async function seedCreative(seller: Seller, owner: string, params: Params): Promise<ControllerAnswer> {
  const fixture = fixtureOf(params)
  const id = String(params.creative_id)
  // A fixture's format_id without agent_url (pagination-integrity's creatives) is one of the creative agent's.
  const formatId = isObject(fixture.format_id)
    ? { agent_url: seller.env.creativeAgentUrl, ...fixture.format_id }
    : { agent_url: seller.env.creativeAgentUrl, id: 'display_300x250_image' }
  const { creative } = await upsertCreative(seller, owner, {
    assets: {},
    ...fixture,
    format_id: formatId,
    creative_id: id,
  })
  if (typeof fixture.status === 'string') {
    const stored: CreativeRecord = { ...creative, status: fixture.status as CreativeRecord['status'] }
    await seller.records.put(CREATIVE_KIND, creativeKey(owner, id), owner, stored)
  }
  return { success: true, message: `creative ${id} seeded` }
}

async function seedFormat(seller: Seller, owner: string, params: Params): Promise<ControllerAnswer> {
  const fixture = fixtureOf(params)
  const formatId = isObject(fixture.format_id) ? fixture.format_id : {}
  const id = String(formatId.id ?? params.format_id ?? fixture.id ?? '')
  if (!id) return controllerError('INVALID_PARAMS', 'the fixture needs format_id.id')
  const format = {
    name: id,
    ...fixture,
    format_id: { agent_url: seller.env.creativeAgentUrl, id },
  }
  try {
    standardCatalog(seller.env.creativeAgentUrl).with([format] as never)
  } catch (error) {
    return controllerError(
      'INVALID_PARAMS',
      `the format fixture is not a valid format: ${String(error).slice(0, 300)}`,
    )
  }
  await seller.records.put(FORMAT_KIND, seededProductKey(owner, id), owner, { format })
  return { success: true, message: `format ${id} seeded` }
}

async function seedAccount(seller: Seller, owner: string, params: Params): Promise<ControllerAnswer> {
  const fixture = fixtureOf(params)
  const id = String(params.account_id)
  const refused = await taken(seller, owner, ACCOUNT_KIND, id, 'account')
  if (refused) return refused
  const at = isoAt(seller.now())
  const account: AccountRecord = {
    brand: isObject(fixture.brand) ? fixture.brand : { domain: 'sandbox.example' },
    ...(typeof fixture.operator === 'string' ? { operator: fixture.operator } : {}),
    ...(typeof fixture.billing === 'string' ? { billing: fixture.billing } : {}),
    ...(typeof fixture.payment_terms === 'string' ? { payment_terms: fixture.payment_terms } : {}),
    notification_configs: Array.isArray(fixture.notification_configs)
      ? (fixture.notification_configs as Record<string, unknown>[])
      : [],
    governance_agents: [],
    created_at: at,
    updated_at: at,
    status: typeof fixture.status === 'string' ? fixture.status : 'active',
    sandbox: true,
    account_id: id,
    owner,
  }
  await seller.records.put(ACCOUNT_KIND, id, owner, account)
  return { success: true, message: `account ${id} seeded` }
}

async function seedMediaBuy(seller: Seller, owner: string, params: Params): Promise<ControllerAnswer> {
  const fixture = fixtureOf(params)
  const id = String(params.media_buy_id)
  const refused = await taken(seller, owner, BUY_KIND, id, 'media buy')
  if (refused) return refused
  const now = seller.now()
  const status = (typeof fixture.status === 'string' ? fixture.status : 'active') as MediaBuyStatus
  const packages = (Array.isArray(fixture.packages) ? fixture.packages.filter(isObject) : [{}]).map(
    (pkg) => ({
      package_id: typeof pkg.package_id === 'string' ? pkg.package_id : newId('pkg'),
      product_id: typeof pkg.product_id === 'string' ? pkg.product_id : 'northwind_display_ros',
      pricing_option_id: typeof pkg.pricing_option_id === 'string' ? pkg.pricing_option_id : 'cpm_fixed',
      budget: typeof pkg.budget === 'number' ? pkg.budget : 1000,
      paused: false,
      canceled: false,
      creative_assignments: Array.isArray(pkg.creative_assignments)
        ? pkg.creative_assignments.filter(isObject).map((a) => ({ creative_id: String(a.creative_id) }))
        : [],
    }),
  )
  const buy: MediaBuyRecord = {
    media_buy_id: id,
    owner,
    account: { sandbox: true },
    account_id: typeof fixture.account_id === 'string' ? fixture.account_id : 'sandbox',
    sandbox: true,
    status,
    currency: typeof fixture.currency === 'string' ? fixture.currency : 'USD',
    start_time: typeof fixture.start_time === 'string' ? fixture.start_time : isoAt(now),
    end_time: typeof fixture.end_time === 'string' ? fixture.end_time : isoAt(now + 30 * 86_400),
    created_at: isoAt(now),
    updated_at: isoAt(now),
    confirmed_at: isoAt(now),
    total_budget: packages.reduce((sum, pkg) => sum + pkg.budget, 0),
    packages,
    impairments: [],
    history: [{ at: isoAt(now), status, actor: 'controller', note: 'seeded' }],
    serving: status === 'active' ? [[now, null]] : [],
    buyer_paused: false,
    ...(isObject(fixture.context) ? { context: fixture.context } : {}),
  }
  await seller.records.put(BUY_KIND, id, owner, buy)
  return { success: true, message: `media buy ${id} seeded` }
}

/** Runs a seed scenario; undefined when `scenario` is not one. */
export async function runSeed(
  seller: Seller,
  owner: string,
  scenario: string,
  params: Params,
): Promise<ControllerAnswer | undefined> {
  switch (scenario) {
    case 'seed_product':
      return seedProduct(seller, owner, params)
    case 'seed_pricing_option':
      return seedPricingOption(seller, owner, params)
    case 'seed_creative':
      return seedCreative(seller, owner, params)
    case 'seed_creative_format':
      return seedFormat(seller, owner, params)
    case 'seed_account':
      return seedAccount(seller, owner, params)
    case 'seed_media_buy':
      return seedMediaBuy(seller, owner, params)
    case 'seed_plan': {
      const id = String(params.plan_id)
      const refused = await taken(seller, owner, 'plan', id, 'plan')
      if (refused) return refused
      await seller.records.put('plan', id, owner, { fixture: fixtureOf(params) })
      return { success: true, message: `plan ${id} seeded` }
    }
    default:
      return undefined
  }
}
