/**
 * Storyboard placeholders, resolved before a request goes on the wire (storyboard-schema.yaml, "Context
 * accumulator and substitution"):
 * - `$generate:uuid_v4` / `$generate:uuid_v4#alias` (and `opaque_id`): a fresh UUID v4; the same alias gives
 *   the same value within a run;
 * - `$context.<name>`: a value in the run's context accumulator (typed, not stringified);
 * - `$test_kit.<path>`: a value of the storyboard's test kit;
 * - `{{prior_step.<step_id>.<path>}}`: a field of an earlier step's response;
 * - `{{runner.webhook_base}}` and `{{runner.webhook_url:<step_id>}}`: the runner's webhook receiver;
 * - the documented "your agent" URLs of the sample requests (`https://your-agent.example.com`,
 *   `https://your-platform.example.com`) stand for the agent under test and become its URL.
 * Anything left unresolved throws {@link UnresolvedSubstitution}: a literal token never reaches the agent.
 */
import { buildAssets } from './build-assets.js'
import { resolvePath } from './path.js'
import { UnresolvedSubstitution } from './substitute-error.js'

/** The sample-request stand-ins for the agent under test's own URL. */
export const AGENT_URL_PLACEHOLDERS: readonly string[] = [
  'https://your-agent.example.com',
  'https://your-platform.example.com',
]

export { UnresolvedSubstitution }

/** What placeholders resolve against; one per storyboard run. */
export interface SubstitutionScope {
  agentUrl: string
  /** The context accumulator: storyboard `context:`, `context_outputs` captures, minted values. */
  context: Map<string, unknown>
  /** Generated `$generate:…#alias` values. */
  generated: Map<string, string>
  /** Responses of the steps run so far, by step id. */
  responses: Map<string, unknown>
  testKit: Record<string, unknown>
  /** The receiver's per-step URL, when the run hosts a webhook receiver. */
  webhookUrl?: (stepId: string) => string
  webhookBase?: string
}

const GENERATE = /^\$generate:(uuid_v4|opaque_id)(?:#(.+))?$/
const CONTEXT = /^\$context\.([A-Za-z0-9_]+)$/
const TEST_KIT = /^\$test_kit\.([A-Za-z0-9_.]+)$/
const MUSTACHE = /\{\{\s*([^}]+?)\s*\}\}/g

function mustache(expression: string, scope: SubstitutionScope): unknown {
  const prior = /^prior_step\.([A-Za-z0-9_-]+)\.(.+)$/.exec(expression)
  if (prior && scope.responses.has(prior[1]!)) {
    const value = resolvePath(scope.responses.get(prior[1]!), prior[2]!)
    if (value !== undefined && value !== null && value !== '') return value
  }
  if (expression === 'runner.webhook_base' && scope.webhookBase) return scope.webhookBase
  const webhook = /^runner\.webhook_url:([A-Za-z0-9_-]+)$/.exec(expression)
  if (webhook && scope.webhookUrl) return scope.webhookUrl(webhook[1]!)
  throw new UnresolvedSubstitution(`{{${expression}}}`)
}

function scalar(value: string, scope: SubstitutionScope): unknown {
  const generate = GENERATE.exec(value)
  if (generate) {
    const alias = generate[2]
    if (alias === undefined) return crypto.randomUUID()
    let minted = scope.generated.get(alias)
    if (!minted) {
      minted = crypto.randomUUID()
      scope.generated.set(alias, minted)
    }
    return minted
  }
  const context = CONTEXT.exec(value)
  if (context) {
    if (!scope.context.has(context[1]!)) throw new UnresolvedSubstitution(value, context[1])
    return scope.context.get(context[1]!)
  }
  const kit = TEST_KIT.exec(value)
  if (kit) {
    const found = resolvePath(scope.testKit, kit[1]!)
    if (found === undefined || found === null) throw new UnresolvedSubstitution(value)
    return found
  }
  if (AGENT_URL_PLACEHOLDERS.includes(value)) return scope.agentUrl
  const whole = /^\{\{\s*([^}]+?)\s*\}\}$/.exec(value)
  if (whole) return mustache(whole[1]!, scope)
  const out = value.replace(MUSTACHE, (_token, expression: string) => String(mustache(expression, scope)))
  if (/\$context\.[A-Za-z0-9_]|\$generate:|\$test_kit\./.test(out)) throw new UnresolvedSubstitution(value)
  return out
}

/**
 * A deep copy of `value` with every placeholder resolved.
 * @example substitute({ id: '$context.cursor' }, scope) // { id: 'c_2' } when a step captured cursor = 'c_2'
 */
export function substitute<T>(value: T, scope: SubstitutionScope): T {
  if (typeof value === 'string') return scalar(value, scope) as T
  if (Array.isArray(value)) return value.map((item: unknown) => substitute(item, scope)) as T
  if (value !== null && typeof value === 'object') {
    const directive = (value as Record<string, unknown>).$build_assets_from_format
    if (directive !== undefined) {
      return buildAssets(substitute(directive, scope), scope.responses.values(), scope.testKit) as T
    }
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, substitute(item, scope)]),
    ) as T
  }
  return value
}
