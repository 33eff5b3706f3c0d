/**
 * The workload of the push crash test: lanes of state changes driven over MCP while the sales agent is
 * SIGKILLed at random moments, and the ledger of the pushes those changes owe.
 * - Account lanes force sandbox accounts through account statuses (comply_test_controller), each transition
 *   at most once per account, so every account.status_changed names its change exactly.
 * - Buy lanes each own a creative: they create a buy assigning it (BUY_REVIEW=always: a submitted task whose
 *   `working` and `completed` are pushed by the seller's due review), move the creative between approved,
 *   suspended and pending_review (every step carries a marker of its own in rejection_reason, which the
 *   creative.status_changed and the buy's impairment echo), pause and resume the buy, and close it (a buyer
 *   cancel or a controller completion: the final report).
 * One lane runs one change at a time, so its changes follow each other; the lanes run side by side. A change
 * whose call a kill cut short is decided by reading the state back once the agent is up again, never assumed.
 */
import { CutError, ToolError, type Answer, type CrashAgent } from './push-crash-agent.js'
import { REPORTING_SECRET, type BuyerSide } from './push-crash-receiver.js'

/** The buyer's one account for creatives and buys (its notification_configs take creative.status_changed). */
export const BUY_ACCOUNT = {
  brand: { domain: 'crash-buyer.example' },
  operator: 'crash-buyer.example',
  sandbox: true,
}
const ACCOUNT_STATUSES = ['active', 'pending_approval', 'rejected', 'payment_required', 'suspended', 'closed']
const TERMINAL_BUY = new Set(['completed', 'canceled', 'rejected'])
const TERMINAL_TASK = new Set(['completed', 'failed', 'canceled', 'rejected'])

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const key = () => `crash_${crypto.randomUUID()}`

/** A small seeded generator (mulberry32): the lanes' choices and the kill gaps follow the seed. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

/** One state change the test asked for. */
export interface Step {
  readonly lane: string
  readonly kind: 'account' | 'creative' | 'create' | 'pause' | 'resume' | 'close'
  readonly target: string
  readonly from?: string
  readonly to?: string
  /** A kill cut the call short: `happened` was read back. */
  readonly cut: boolean
  readonly happened: boolean
}

export interface WorkloadOptions {
  /** Stop starting changes once this many happened. */
  readonly changes: number
  readonly seed: number
  /** Changes between two kills: drawn uniformly from [min, max]. */
  readonly killGap: readonly [number, number]
  readonly buyLanes: number
  readonly accountLanes: number
}

/** What the run did and what it owes: the events (see push-crash-receiver.ts) the receiver must publish. */
export interface Ledger {
  readonly steps: Step[]
  /** Event id → why it is owed. */
  readonly expected: Map<string, string>
  /** Events that may come but need not (an impairment on a buy no lane knows of). */
  readonly allowed: Set<string>
  /** Task id → the operation_id of the create that answered it. */
  readonly tasks: Map<string, string>
  /** The buys the lanes created (media_buy_id → creative). */
  readonly buys: Map<string, string>
  /** Suspension markers per creative (every suspension that happened, whichever buy was live). */
  readonly suspensions: Map<string, Set<string>>
  /** Seller-side task transitions read back at the end (working, completed…). */
  taskTransitions: number
  /** Buys found at the end that no lane created (a create carried out twice under one idempotency_key). */
  unknownBuys: string[]
  /** Tasks whose status could not be read (a push for a task the seller does not hold). */
  missingTasks: string[]
  /** Tasks still open at the end (their review never finished). */
  openTasks: string[]
  /** Waits that ran out (an impairment that never came, a review that never finished): they slow the run. */
  waitsRanOut: string[]
}

/**
 * Drives the lanes and the kills until `changes` happened, then closes every buy and reads back the state
 * that decides the pushes owed. Resolves with the ledger (the receiver is compared with it afterwards).
 */
export async function runWorkload(
  agent: CrashAgent,
  buyer: BuyerSide,
  options: WorkloadOptions,
): Promise<Ledger> {
  const run = new Workload(agent, buyer, options)
  await run.setup()
  await Promise.all([
    ...Array.from({ length: options.accountLanes }, (_, index) => run.accountLane(`a${index}`)),
    ...Array.from({ length: options.buyLanes }, (_, index) => run.buyLane(`b${index}`)),
  ])
  await run.settle()
  return run.ledger
}

/** A step as a lost or duplicated push names it: `b1: creative cr_b1 approved → suspended (cut, read back)`. */
const describeStep = (step: Step) =>
  `${step.lane}: ${step.kind} ${step.target} ${step.from} → ${step.to}${step.cut ? ' (cut by a kill, read back)' : ' (acknowledged)'}`

class Workload {
  readonly ledger: Ledger = {
    steps: [],
    expected: new Map(),
    allowed: new Set(),
    tasks: new Map(),
    buys: new Map(),
    suspensions: new Map(),
    taskTransitions: 0,
    unknownBuys: [],
    missingTasks: [],
    openTasks: [],
    waitsRanOut: [],
  }
  readonly #random: () => number
  #happened = 0
  #sinceKill = 0
  #nextKill: number
  #killing: Promise<void> | undefined
  #markers = 0
  /** The step that closed each buy. */
  readonly #closes = new Map<string, Step>()

  constructor(
    readonly agent: CrashAgent,
    readonly buyer: BuyerSide,
    readonly options: WorkloadOptions,
  ) {
    this.#random = seeded(options.seed)
    this.#nextKill = this.#gap()
  }

  get done(): boolean {
    return this.#happened >= this.options.changes
  }

  #gap(): number {
    const [min, max] = this.options.killGap
    return min + Math.floor(this.#random() * (max - min + 1))
  }

  #pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.#random() * items.length)]!
  }

  /** A call that a kill may cut: retried (it only reads, or is idempotent) until it answers. */
  async #read(tool: string, args: Record<string, unknown>): Promise<Answer> {
    for (;;) {
      try {
        return await this.agent.call(tool, args)
      } catch (error) {
        if (!(error instanceof CutError)) throw error
      }
    }
  }

  /**
   * Runs one change: `call` makes it; when a kill cuts it, `state` reads back the target's state once the
   * agent is up, and the change happened when that is `to` (it must be `from` otherwise). Counts it towards
   * the next kill. Resolves with the step as recorded.
   */
  async #change(
    step: Omit<Step, 'cut' | 'happened'> & { readonly from: string; readonly to: string },
    call: () => Promise<Answer>,
    state: () => Promise<string>,
  ): Promise<Step> {
    let cut = false
    let happened = true
    try {
      await call()
    } catch (error) {
      if (!(error instanceof CutError)) throw error
      cut = true
      const now = await state()
      if (now !== step.from && now !== step.to)
        throw new Error(
          `${step.kind} ${step.target}: ${step.from} → ${step.to} was cut, and it reads ${now}`,
          {
            cause: error,
          },
        )
      happened = now === step.to
    }
    const recorded = { ...step, cut, happened }
    this.#record(recorded)
    return recorded
  }

  #record(step: Step): void {
    this.ledger.steps.push(step)
    if (step.happened) this.#happened++
    this.#sinceKill++
    if (this.#sinceKill >= this.#nextKill && !this.#killing && !this.done) {
      this.#sinceKill = 0
      this.#nextKill = this.#gap()
      // A moment later, so that the lanes' next calls are on the wire.
      const delay = Math.floor(this.#random() * 40)
      const killing = sleep(delay)
        .then(() => this.agent.kill())
        .finally(() => (this.#killing = undefined))
      // A failed restart reaches the lanes (their calls wait for it) and settle(), which awaits this.
      killing.catch(() => undefined)
      this.#killing = killing
    }
  }

  #owe(id: string, why: string): void {
    this.ledger.expected.set(id, why)
  }

  async setup(): Promise<void> {
    await this.agent.call('sync_agent_notification_configs', {
      notification_configs: [
        {
          subscriber_id: 'crash-accounts',
          url: this.buyer.hooks.account,
          event_types: ['account.status_changed'],
        },
      ],
    })
    await this.agent.call('sync_accounts', {
      idempotency_key: key(),
      accounts: [
        {
          ...BUY_ACCOUNT,
          billing: 'operator',
          notification_configs: [
            {
              subscriber_id: 'crash-creatives',
              url: this.buyer.hooks.creative,
              event_types: ['creative.status_changed'],
            },
          ],
        },
      ],
    })
    const creatives = Array.from({ length: this.options.buyLanes }, (_, index) => ({
      creative_id: `cr_b${index}`,
      name: `crash creative ${index}`,
      format_id: { agent_url: 'http://127.0.0.1:4200', id: 'display_300x250_image' },
      assets: {
        image: { asset_type: 'image', url: 'https://cdn.example/a.png', width: 300, height: 250 },
      },
    }))
    const synced = await this.agent.call('sync_creatives', {
      idempotency_key: key(),
      account: BUY_ACCOUNT,
      creatives,
    })
    for (const creative of synced.creatives as Answer[])
      if (creative.status !== 'approved')
        throw new Error(`creative ${creative.creative_id}: ${creative.status}`)
  }

  async #accountStatus(id: string): Promise<string> {
    let cursor: string | undefined
    for (;;) {
      const page = await this.#read('list_accounts', {
        pagination: { max_results: 100, ...(cursor ? { cursor } : {}) },
      })
      const found = (page.accounts as Answer[]).find((account) => account.account_id === id)
      if (found) return String(found.status)
      cursor = page.pagination?.cursor
      if (!page.pagination?.has_more || !cursor) throw new Error(`account ${id} is not listed`)
    }
  }

  /** Account lane: one sandbox account at a time, each transition at most once, a new account when stuck. */
  async accountLane(lane: string): Promise<void> {
    for (let index = 0; !this.done; index++) {
      const id = `acct_${lane}_${index}`
      await this.#read('comply_test_controller', {
        scenario: 'seed_account',
        params: { account_id: id, fixture: { brand: { domain: `${id.replaceAll('_', '-')}.example` } } },
        account: { sandbox: true },
      })
      let status = 'active'
      const used = new Set<string>()
      for (;;) {
        if (this.done) return
        const next = ACCOUNT_STATUSES.filter((to) => to !== status && !used.has(`${status}>${to}`))
        if (next.length === 0) break
        const to = this.#pick(next)
        const step = await this.#change(
          { lane, kind: 'account', target: id, from: status, to },
          () =>
            this.agent.call('comply_test_controller', {
              scenario: 'force_account_status',
              params: { account_id: id, status: to },
              account: { sandbox: true },
            }),
          () => this.#accountStatus(id),
        )
        if (!step.happened) continue
        used.add(`${status}>${to}`)
        this.#owe(`account:${id}:${status}>${to}`, describeStep(step))
        status = to
      }
    }
  }

  async #creativeStatus(id: string): Promise<string> {
    const listed = await this.#read('list_creatives', { filters: { creative_ids: [id] } })
    return String((listed.creatives as Answer[])[0]?.status)
  }

  async #buyStatus(id: string): Promise<string> {
    const listed = await this.#read('get_media_buys', { media_buy_ids: [id] })
    return String((listed.media_buys as Answer[])[0]?.status)
  }

  /** Buy lane: buys over its own creative, one after the other, each with a few changes, then closed. */
  async buyLane(lane: string): Promise<void> {
    const creative = `cr_${lane}`
    const state = { creative: 'approved', impairment: undefined as string | undefined }
    const creativeStep = async (to: string, buy: string | undefined) => {
      if (to === 'suspended' && state.impairment) {
        // The previous suspension's impairment is delivered first: coalescing may merge a pending older
        // impairment of the same creative into a newer one, which is no loss.
        const pending = state.impairment
        if (!(await this.#until(() => this.buyer.hasPublished(pending), 5000)))
          this.ledger.waitsRanOut.push(pending)
        state.impairment = undefined
      }
      const marker = `m${++this.#markers}`
      const step = await this.#change(
        { lane, kind: 'creative', target: creative, from: state.creative, to },
        () =>
          this.agent.call('comply_test_controller', {
            scenario: 'force_creative_status',
            params: { creative_id: creative, status: to, rejection_reason: marker },
            account: BUY_ACCOUNT,
          }),
        () => this.#creativeStatus(creative),
      )
      if (!step.happened) return
      this.#owe(`creative:${creative}:${marker}`, describeStep(step))
      if (to === 'suspended') {
        const markers = this.ledger.suspensions.get(creative) ?? new Set()
        this.ledger.suspensions.set(creative, markers.add(marker))
        if (buy) {
          state.impairment = `impairment:${buy}:${creative}:${marker}`
          this.#owe(state.impairment, `${describeStep(step)}, buy ${buy} live`)
        }
      }
      state.creative = to
    }
    for (let round = 0; !this.done; round++) {
      while (state.creative !== 'approved') await creativeStep('approved', undefined)
      const buy = await this.#createBuy(lane, `op-${lane}-${round}`, creative)
      if (!buy) continue
      let status = 'active'
      const changes = 2 + Math.floor(this.#random() * 5)
      for (let index = 0; index < changes && !this.done; index++) {
        if (this.#random() < 0.6) {
          const to = state.creative === 'approved' ? this.#pick(['suspended', 'pending_review']) : 'approved'
          await creativeStep(to, buy)
          continue
        }
        const to = status === 'paused' ? 'active' : 'paused'
        const step = await this.#change(
          { lane, kind: to === 'paused' ? 'pause' : 'resume', target: buy, from: status, to },
          () =>
            this.agent.call('update_media_buy', {
              idempotency_key: key(),
              account: BUY_ACCOUNT,
              media_buy_id: buy,
              paused: to === 'paused',
            }),
          () => this.#buyStatus(buy),
        )
        if (step.happened) status = to
      }
      const closed = await this.#close(lane, buy, status, this.#random() < 0.5 ? 'buyer' : 'controller')
      this.#closes.set(buy, closed)
    }
  }

  /** Closes a buy (a buyer cancel, or the controller completing it); resolves with the step that did. */
  async #close(lane: string, buy: string, from: string, by: 'buyer' | 'controller'): Promise<Step> {
    const to = by === 'buyer' ? 'canceled' : 'completed'
    for (;;) {
      const step = await this.#change(
        { lane, kind: 'close', target: buy, from, to },
        () =>
          by === 'buyer'
            ? this.agent.call('update_media_buy', {
                idempotency_key: key(),
                account: BUY_ACCOUNT,
                media_buy_id: buy,
                canceled: true,
              })
            : this.agent.call('comply_test_controller', {
                scenario: 'force_media_buy_status',
                params: { media_buy_id: buy, status: to },
                account: BUY_ACCOUNT,
              }),
        () => this.#buyStatus(buy),
      )
      if (step.happened) return step
    }
  }

  /**
   * Creates a buy in review and waits for its task: resolves with the media_buy_id once it completed, or
   * undefined when it did not within 8 s (a task whose review never runs owes no later push). A cut create is
   * sent again under the same idempotency_key, as a buyer would.
   */
  async #createBuy(lane: string, operationId: string, creative: string): Promise<string | undefined> {
    const request = {
      idempotency_key: key(),
      account: BUY_ACCOUNT,
      brand: BUY_ACCOUNT.brand,
      po_number: operationId,
      start_time: 'asap',
      end_time: '2099-06-30T23:59:59Z',
      push_notification_config: { url: this.buyer.hooks.task, operation_id: operationId },
      reporting_webhook: {
        url: this.buyer.hooks.reports,
        reporting_frequency: 'hourly',
        authentication: { schemes: ['HMAC-SHA256'], credentials: REPORTING_SECRET },
      },
      packages: [
        {
          product_id: 'trailhead_lifestyle_display',
          pricing_option_id: 'cpm_standard',
          budget: 5000,
          bid_price: 7,
          creative_assignments: [{ creative_id: creative }],
        },
      ],
    }
    let cut = false
    let answer: Answer
    for (;;) {
      try {
        answer = await this.agent.call('create_media_buy', request)
        break
      } catch (error) {
        if (error instanceof CutError) {
          cut = true
          continue
        }
        // The retry found the first attempt still claimed: it is settled once its claim expires.
        if (error instanceof ToolError && cut && error.code === 'IDEMPOTENCY_IN_FLIGHT') {
          await sleep(200)
          continue
        }
        throw error
      }
    }
    if (answer.status !== 'submitted' || typeof answer.task_id !== 'string')
      throw new Error(`create_media_buy answered ${JSON.stringify(answer).slice(0, 400)}`)
    const taskId = answer.task_id as string
    this.ledger.tasks.set(taskId, operationId)
    this.#record({ lane, kind: 'create', target: operationId, to: taskId, cut, happened: true })
    let task: Answer
    const ended = await this.#until(async () => {
      task = await this.#read('get_task_status', { task_id: taskId, include_result: true })
      return TERMINAL_TASK.has(task.status)
    }, 8000)
    if (!ended) this.ledger.waitsRanOut.push(`task ${taskId}`)
    if (!ended || task.status !== 'completed') return undefined
    const buy = String(task.result.media_buy_id)
    this.ledger.buys.set(buy, creative)
    return buy
  }

  /** Polls `condition` every 50 ms for up to `ms` of the agent's up time; resolves with whether it held. */
  async #until(condition: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
    let waited = 0
    for (;;) {
      await this.agent.ready()
      if (await condition()) return true
      if (waited >= ms) return false
      await sleep(50)
      waited += 50
    }
  }

  /**
   * After the last change: every task settled and read back, every buy closed (those no lane knows of too),
   * and the reports owed computed from what the buys' final reports say.
   */
  async settle(): Promise<void> {
    await this.#killing
    const { ledger } = this
    // Tasks the lanes know, and any task a push names.
    const tasks = new Set(ledger.tasks.keys())
    for (const push of [...this.buyer.wire(), ...this.buyer.published()])
      if (push.event.kind === 'task' && push.event.taskId) tasks.add(push.event.taskId)
    for (const taskId of tasks) {
      let task: Answer
      try {
        const read = async () =>
          (task = await this.#read('get_task_status', { task_id: taskId, include_history: true }))
        await this.#until(async () => TERMINAL_TASK.has((await read()).status), 10_000)
      } catch (error) {
        if (error instanceof ToolError) {
          ledger.missingTasks.push(taskId)
          continue
        }
        throw error
      }
      if (!TERMINAL_TASK.has(task.status)) ledger.openTasks.push(taskId)
      const statuses = (task.history as Answer[]).map((entry) => String(entry.data.status))
      ledger.taskTransitions += statuses.length - 1
      for (const status of statuses.slice(1))
        this.#owe(`task:${taskId}:${status}`, `task ${taskId} moved to ${status}`)
    }
    // Every buy the principal holds ends closed: its final report is owed.
    for (const buy of await this.#allBuys()) {
      if (!ledger.buys.has(buy.media_buy_id)) ledger.unknownBuys.push(buy.media_buy_id)
      if (!TERMINAL_BUY.has(buy.status))
        this.#closes.set(
          buy.media_buy_id,
          await this.#close('end', buy.media_buy_id, buy.status, 'controller'),
        )
      const closed = this.#closes.get(buy.media_buy_id)
      this.#owe(
        `final:${buy.media_buy_id}`,
        closed ? describeStep(closed) : `buy ${buy.media_buy_id} ${buy.status}`,
      )
    }
    // An impairment on a buy no lane knows of may come for any suspension of its creative.
    for (const buy of ledger.unknownBuys)
      for (const [creative, markers] of ledger.suspensions)
        for (const marker of markers) ledger.allowed.add(`impairment:${buy}:${creative}:${marker}`)
  }

  async #allBuys(): Promise<{ media_buy_id: string; status: string }[]> {
    const buys: { media_buy_id: string; status: string }[] = []
    let cursor: string | undefined
    for (;;) {
      const page = await this.#read('get_media_buys', {
        status_filter: [
          'pending_creatives',
          'pending_start',
          'active',
          'paused',
          'completed',
          'rejected',
          'canceled',
        ],
        pagination: { max_results: 100, ...(cursor ? { cursor } : {}) },
      })
      for (const buy of page.media_buys as Answer[])
        buys.push({ media_buy_id: String(buy.media_buy_id), status: String(buy.status) })
      cursor = page.pagination?.cursor
      if (!page.pagination?.has_more || !cursor) return buys
    }
  }
}
