/**
 * The state of one storyboard run: the agent profile, the context accumulator, which steps passed, which
 * flags were contributed, and the calls (with the step's `auth:` override and the step timeout).
 */
import type { AgentProfile } from './applicability.js'
import type { GradeInput } from './grade.js'
import type { Credentials } from './http.js'
import type { Status } from './result.js'
import type { SchemaValidator } from './schemas.js'
import type { SubstitutionScope } from './substitute.js'
import { callOnce, type CallerOptions, type Protocol, type TaskCaller, type TaskResponse } from './caller.js'
import type { Phase, Step, TestKit } from './types.js'
import type { WebhookSession } from './webhook-receiver.js'

/** What every storyboard run shares. */
export interface RunEnvironment {
  /** The agent's public URL: placeholders, `resource_equals_agent_url`, `$agent_url` scopes. */
  agentUrl: string
  /** Where the agent is reached (differs from `agentUrl` behind a route). */
  connectUrl: string
  protocol: Protocol
  caller: TaskCaller
  callerOptions: CallerOptions
  profile: AgentProfile
  schemas: SchemaValidator | undefined
  stepTimeoutMs: number
  /** The run's webhook receiver, when it hosts one. */
  webhooks: WebhookSession | undefined
  /** The kit whose credentials the run uses by default (acme-outdoor): the buyer a completed request speaks for. */
  defaultTestKit: TestKit
}

const randomToken = (bytes: number): string =>
  btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(bytes))))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')

/** One storyboard's run state. */
export class RunContext {
  /** Step id → how it ended. */
  readonly outcomes = new Map<string, Status>()
  /** `$context` name → the step whose `context_outputs` captures it. */
  readonly producers = new Map<string, string>()
  readonly contributions = new Set<string>()
  /** Step id → the task it ran (to find an earlier step's response by task). */
  readonly tasks = new Map<string, string>()
  /** When the storyboard run began (epoch ms): completed requests date their flight from it. */
  readonly startedAt = Date.now()
  /** The products of the runner's own get_products call, made once when a request is completed. */
  discoveredProducts: unknown[] | undefined

  constructor(
    readonly env: RunEnvironment,
    readonly scope: SubstitutionScope,
  ) {}

  get profile(): AgentProfile {
    return this.env.profile
  }
  get schemas(): SchemaValidator | undefined {
    return this.env.schemas
  }

  /** The credentials a step's `auth:` override asks for, or undefined for the run's own. */
  private credentialsFor(step: Step): Credentials | undefined {
    const auth = step.auth
    if (auth === undefined) return undefined
    if (auth === 'none') return { type: 'none' }
    const kit = this.scope.testKit.auth as Record<string, unknown> | undefined
    if (auth.value_strategy === 'random_invalid') {
      return auth.type === 'basic'
        ? { type: 'basic', username: randomToken(12), password: randomToken(12) }
        : { type: 'bearer', token: `invalid-${randomToken(32)}` }
    }
    if (auth.value_strategy === 'random_invalid_jwt') {
      return { type: 'bearer', token: `${randomToken(16)}.${randomToken(24)}.${randomToken(32)}` }
    }
    if (auth.type === 'basic') {
      const basic = (kit?.basic ?? {}) as { username?: string; password?: string; credentials?: string }
      const [username, password] = basic.credentials?.split(':') ?? [basic.username, basic.password]
      return { type: 'basic', username: username ?? '', password: password ?? '' }
    }
    const path = typeof auth.from_test_kit === 'string' ? auth.from_test_kit : 'auth.api_key'
    const token = path
      .split('.')
      .reduce<unknown>(
        (value, key) => (value as Record<string, unknown> | undefined)?.[key],
        this.scope.testKit,
      )
    return typeof token === 'string' ? { type: 'bearer', token } : undefined
  }

  /** Calls a task for a step, on a fresh connection when the step overrides the credentials. */
  call(task: string, request: Record<string, unknown>, step: Step): Promise<TaskResponse> {
    const credentials = this.credentialsFor(step)
    const timeout = Math.min(this.env.stepTimeoutMs, (step.timeout_seconds ?? Infinity) * 1000)
    if (!credentials) return this.env.caller.call(task, request, timeout)
    return callOnce(
      this.env.protocol,
      this.env.connectUrl,
      { ...this.env.callerOptions, credentials },
      task,
      request,
      timeout,
    )
  }

  /** The grading input of a step. */
  gradeInput(
    request: Record<string, unknown>,
    response: TaskResponse | undefined,
    responseSchemaRef?: string,
  ): GradeInput {
    const hasController = this.profile.tasks.has('comply_test_controller')
    return {
      body: response?.body,
      responseSchemaRef,
      context: this.scope.context,
      schemas: this.schemas,
      transport: this.env.protocol,
      http: response?.http,
      agentUrl: this.env.agentUrl,
      request,
      contributions: this.contributions,
      transportError: response?.transportError ?? false,
      raw: response?.raw,
      controller: hasController
        ? async (scenario, params) =>
            (
              await this.env.caller.call(
                'comply_test_controller',
                { scenario, params },
                this.env.stepTimeoutMs,
              )
            ).body
        : undefined,
    }
  }

  /** Records a passed step's branch-set contribution. */
  contribute(phase: Phase, step: Step): void {
    if (step.contributes_if) {
      const match = /^prior_step\.([A-Za-z0-9_-]+)\.passed$/.exec(step.contributes_if)
      if (!match || this.outcomes.get(match[1]!) !== 'passed') return
    }
    if (step.contributes_to) this.contributions.add(step.contributes_to)
    else if (step.contributes === true && phase.branch_set) this.contributions.add(phase.branch_set.id)
  }
}
