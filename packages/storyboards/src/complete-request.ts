/**
 * Completing a partial `sample_request` (what the reference runner calls request enrichment). A few 3.1.19
 * storyboards write only the fields they are about and leave the rest of a mutating request to the runner:
 * webhook-emission's triggers send `create_media_buy` with `push_notification_config`, `idempotency_key` and
 * `context` alone ("the runner calls the first operation the capability block advertises as webhook-emitting").
 *
 * When: the step's task has a completer (`create_media_buy`), the step does not expect an error (nor opts out of
 * the request schema), and the substituted request lacks a top-level field the task's official request schema
 * requires. A complete request is sent as written.
 *
 * How: only absent top-level fields are added; a field the storyboard wrote is never changed.
 * - `brand`: the storyboard test kit's brand, else the brand of the run's default kit (acme-outdoor, whose
 *   credentials the run uses): `{ domain }` of its house.
 * - `account`: that brand's natural key, the brand operating for itself (`operator` = the brand domain), with
 *   `sandbox: true` when the kit is a sandbox kit (`sandbox: true` or `endpoint_scope: sandbox`).
 * - `start_time` / `end_time`: a one-week flight starting a day after the storyboard run began, on the hour (the
 *   same values for every step of the run, so an idempotent replay sends identical bytes).
 * - `packages` (unless the request names a `proposal_id`): one package on a product the agent offers, read from
 *   the `get_products` responses of earlier steps of the run, else from one `get_products` call of the runner's
 *   own (`wholesale` when the agent advertises that buying mode, else a generic brief; remembered for the run).
 *   The product has a pricing option; a step that registers a `push_notification_config` prefers a guaranteed
 *   product, the buy the spec sends through the seller's approval (IO signature, `submitted`) on which task
 *   webhooks follow. A fixed-price option is preferred; an auction option gets `bid_price` = 1.5 × its floor.
 *   `budget` is the option's `min_spend_per_package`, at least 1,000.
 */
import { resolvePath } from './path.js'
import type { RunContext } from './run-context.js'
import type { Step, TestKit } from './types.js'
import { isRecord } from '@adwire/schemas/json'

type Json = Record<string, unknown>

/** What a completion did, reported on the step. */
export interface RequestCompletion {
  /** The top-level fields the runner added. */
  fields: string[]
  /** Where the package's product came from: `earlier_step:<step id>` or `get_products`. */
  products_from?: string
}

/** A completed request, or why it could not be completed. */
export type CompletionOutcome =
  { request: Json; completion: RequestCompletion } | { problem: string } | undefined

/** task → its official request schema (the authority on which fields a complete request has). */
const COMPLETED_TASKS: Readonly<Record<string, string>> = {
  create_media_buy: 'media-buy/create-media-buy-request.json',
}

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS
const MIN_BUDGET = 1000
const GENERIC_BRIEF = 'Advertising products across every channel for a sandbox test campaign'

/** The kit a completed request speaks for: the storyboard's, when it names a brand, else the run's default. */
function buyerKit(run: RunContext): TestKit {
  return isRecord(run.scope.testKit.brand) ? run.scope.testKit : run.env.defaultTestKit
}

function brandOf(kit: TestKit): Json | undefined {
  const brand = kit.brand
  if (!isRecord(brand)) return undefined
  const domain = isRecord(brand.house) ? brand.house.domain : brand.domain
  return typeof domain === 'string' ? { domain } : undefined
}

function accountOf(brand: Json, kits: TestKit[]): Json {
  const sandbox = kits.some((kit) => kit.sandbox === true || kit.endpoint_scope === 'sandbox')
  return { brand, operator: brand.domain, ...(sandbox ? { sandbox: true } : {}) }
}

/** The run's flight: a week from a day after the run began, on the hour. */
function flight(run: RunContext): { start_time: string; end_time: string } {
  const start = Math.floor((run.startedAt + DAY_MS) / HOUR_MS) * HOUR_MS
  const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z')
  return { start_time: iso(start), end_time: iso(start + 7 * DAY_MS) }
}

interface Choice {
  product: Json
  option: Json
}

/** A pricing option a runner can buy without negotiation: fixed price first, then an auction with a floor. */
function usableOption(product: Json): Json | undefined {
  const options = Array.isArray(product.pricing_options) ? product.pricing_options.filter(isRecord) : []
  return (
    options.find((option) => typeof option.fixed_price === 'number') ??
    options.find((option) => typeof option.floor_price === 'number')
  )
}

/** The product a completed package buys (see the module comment for the preference). */
export function chooseProduct(products: unknown[], preferGuaranteed: boolean): Choice | undefined {
  const choices = products
    .filter(isRecord)
    .filter((product) => typeof product.product_id === 'string')
    .map((product) => ({ product, option: usableOption(product) }))
    .filter((choice): choice is Choice => choice.option !== undefined)
  return (
    (preferGuaranteed
      ? choices.find((choice) => choice.product.delivery_type === 'guaranteed')
      : undefined) ?? choices[0]
  )
}

function packageFor({ product, option }: Choice): Json {
  const minSpend = typeof option.min_spend_per_package === 'number' ? option.min_spend_per_package : 0
  const pkg: Json = {
    product_id: product.product_id,
    pricing_option_id: option.pricing_option_id,
    budget: Math.max(MIN_BUDGET, minSpend),
  }
  if (typeof option.fixed_price !== 'number')
    pkg.bid_price = Math.round((option.floor_price as number) * 150) / 100
  return pkg
}

/** The products of the latest earlier `get_products` response of the run, with the step that got them. */
function productsOfEarlierSteps(run: RunContext): { products: unknown[]; from: string } | undefined {
  let found: { products: unknown[]; from: string } | undefined
  for (const [stepId, body] of run.scope.responses) {
    const products = resolvePath(body, 'products')
    if (run.tasks.get(stepId) === 'get_products' && Array.isArray(products) && products.length)
      found = { products, from: `earlier_step:${stepId}` }
  }
  return found
}

/** The runner's own `get_products` call, once per storyboard run. */
async function discoverProducts(run: RunContext, brand: Json, account: Json): Promise<unknown[] | string> {
  if (run.discoveredProducts) return run.discoveredProducts
  if (!run.profile.tasks.has('get_products'))
    return 'the agent does not advertise get_products, so no product is known to buy'
  const modes = resolvePath(run.profile.capabilities, 'media_buy.buying_modes')
  const wholesale = Array.isArray(modes) && modes.includes('wholesale')
  const request: Json = wholesale
    ? { buying_mode: 'wholesale', brand, account }
    : { buying_mode: 'brief', brief: GENERIC_BRIEF, brand, account }
  const answer = await run.env.caller.call('get_products', request, run.env.stepTimeoutMs)
  const products = resolvePath(answer.body, 'products')
  if (!Array.isArray(products))
    return `get_products (${String(request.buying_mode)}) answered no products: ${JSON.stringify(answer.body ?? answer.error ?? null).slice(0, 200)}`
  run.discoveredProducts = products
  return products
}

/**
 * Completes the request of a step when it should be (see the module comment); undefined when it should not.
 * @example const outcome = await completeRequest('create_media_buy', step, request, run)
 */
export async function completeRequest(
  task: string,
  step: Step,
  request: Json,
  run: RunContext,
): Promise<CompletionOutcome> {
  const schema = COMPLETED_TASKS[task]
  if (!schema || !run.schemas?.has(schema)) return undefined
  if (step.expect_error === true || step.sample_request_skip_schema === true) return undefined
  const missing = run.schemas.required(schema).filter((field) => request[field] === undefined)
  if (missing.length === 0) return undefined
  const kit = buyerKit(run)
  const brand = brandOf(kit)
  if (!brand) return { problem: 'no test kit names a brand to buy for' }
  const completed: Json = { ...request }
  const fields: string[] = []
  const add = (field: string, value: unknown) => {
    if (completed[field] !== undefined) return
    completed[field] = value
    fields.push(field)
  }
  add('brand', brand)
  add('account', accountOf(brand, [kit, run.scope.testKit]))
  const { start_time, end_time } = flight(run)
  add('start_time', start_time)
  add('end_time', end_time)
  let productsFrom: string | undefined
  if (completed.packages === undefined && completed.proposal_id === undefined) {
    const earlier = productsOfEarlierSteps(run)
    const products = earlier?.products ?? (await discoverProducts(run, brand, completed.account as Json))
    if (typeof products === 'string') return { problem: products }
    const choice = chooseProduct(products, isRecord(completed.push_notification_config))
    if (!choice) return { problem: 'the agent offers no product with a fixed-price or floor-priced option' }
    add('packages', [packageFor(choice)])
    productsFrom = earlier?.from ?? 'get_products'
  }
  return {
    request: completed,
    completion: { fields, ...(productsFrom ? { products_from: productsFrom } : {}) },
  }
}

/** The official request schema of a completed task, for the request check when the step's own ref is a kit ref. */
export function completedTaskSchema(task: string): string | undefined {
  return COMPLETED_TASKS[task]
}
