/**
 * Storyboard placeholders, resolved before a request goes on the wire (storyboard-schema.yaml, "Context
 * accumulator and substitution"):
 * - `$generate:uuid_v4` / `$generate:uuid_v4#alias` (and `opaque_id`): a fresh UUID v4 per run; the same alias
 *   gives the same value within a run;
 * - `$context.<name>`: a value captured by an earlier step's `context_outputs` (typed, not stringified);
 * - `{{prior_step.<step_id>.<path>}}`: a field of an earlier step's response;
 * - the documented "your agent" URLs of the sample requests (`https://your-agent.example.com`,
 *   `https://your-platform.example.com`) stand for the agent under test and become its URL.
 * Anything left unresolved (a `{{runner.*}}` webhook URL, a capture that never happened) throws
 * {@link UnresolvedSubstitution}: a literal token never reaches the agent.
 */
import { randomUUID } from 'node:crypto'
import { resolvePath } from './path.js'

/** The sample-request stand-ins for the agent under test's own URL. */
export const AGENT_URL_PLACEHOLDERS: readonly string[] = [
  'https://your-agent.example.com',
  'https://your-platform.example.com',
]

/** A placeholder the run cannot resolve (storyboard grading code `unresolved_substitution`). */
export class UnresolvedSubstitution extends Error {
  override readonly name = 'UnresolvedSubstitution'
  constructor(readonly token: string) {
    super(`unresolved_substitution: ${token}`)
  }
}

/** What placeholders resolve against; one per storyboard run. */
export interface SubstitutionScope {
  agentUrl: string
  /** `context_outputs` captures and minted values. */
  context: Map<string, unknown>
  /** Generated `$generate:…#alias` values. */
  generated: Map<string, string>
  /** Responses of the steps run so far, by step id. */
  responses: Map<string, unknown>
}

const GENERATE = /^\$generate:(uuid_v4|opaque_id)(?:#(.+))?$/
const CONTEXT = /^\$context\.([A-Za-z0-9_]+)$/
const MUSTACHE = /\{\{\s*([^}]+?)\s*\}\}/g

function mustache(expression: string, scope: SubstitutionScope): unknown {
  const match = /^prior_step\.([A-Za-z0-9_-]+)\.(.+)$/.exec(expression)
  if (match && scope.responses.has(match[1]!)) {
    const value = resolvePath(scope.responses.get(match[1]!), match[2]!)
    if (value !== undefined && value !== null && value !== '') return value
  }
  throw new UnresolvedSubstitution(`{{${expression}}}`)
}

function scalar(value: string, scope: SubstitutionScope): unknown {
  const generate = GENERATE.exec(value)
  if (generate) {
    const alias = generate[2]
    if (alias === undefined) return randomUUID()
    let minted = scope.generated.get(alias)
    if (!minted) {
      minted = randomUUID()
      scope.generated.set(alias, minted)
    }
    return minted
  }
  const context = CONTEXT.exec(value)
  if (context) {
    if (!scope.context.has(context[1]!)) throw new UnresolvedSubstitution(value)
    return scope.context.get(context[1]!)
  }
  if (AGENT_URL_PLACEHOLDERS.includes(value)) return scope.agentUrl
  const whole = /^\{\{\s*([^}]+?)\s*\}\}$/.exec(value)
  if (whole) return mustache(whole[1]!, scope)
  const out = value.replace(MUSTACHE, (_token, expression: string) => String(mustache(expression, scope)))
  if (/\$context\.|\$generate:/.test(out)) throw new UnresolvedSubstitution(value)
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
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, substitute(item, scope)]),
    ) as T
  }
  return value
}
