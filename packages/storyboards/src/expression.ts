/**
 * The `skip_if` expression language of the 3.1.19 storyboards: references to the run's context accumulator
 * (`context.<name>`) and the test kit (`test_kit.<path>`), `!`, `==`, `!=` against literals or references, joined
 * by `||` and `&&` (`&&` binds tighter). Truthiness is JavaScript's. Anything else is a load error.
 */
import { resolvePath } from './path.js'

type Operand = { ref: string } | { literal: unknown }
type Term = { not: boolean; left: Operand; op?: '==' | '!='; right?: Operand }
/** A parsed expression: OR of ANDs of terms. */
export type Expression = Term[][]

const REF = /^(context|test_kit)(\.[A-Za-z0-9_]+)+$/

function operand(text: string, source: string): Operand {
  const value = text.trim()
  if (REF.test(value)) return { ref: value }
  if (value === 'true' || value === 'false') return { literal: value === 'true' }
  if (value === 'null') return { literal: null }
  if (/^-?\d+(\.\d+)?$/.test(value)) return { literal: Number(value) }
  const quoted = /^'([^']*)'$|^"([^"]*)"$/.exec(value)
  if (quoted) return { literal: quoted[1] ?? quoted[2] }
  throw new Error(`cannot read ${JSON.stringify(value)} in ${JSON.stringify(source)}`)
}

/**
 * Parses a `skip_if` expression; throws on anything outside the grammar.
 * @example parseExpression("!test_kit.auth.api_key")
 */
export function parseExpression(source: string): Expression {
  return source.split('||').map((conjunction) =>
    conjunction.split('&&').map((raw): Term => {
      let text = raw.trim()
      const comparison = /^(.+?)\s*(==|!=)\s*(.+)$/.exec(text)
      if (comparison) {
        return {
          not: false,
          left: operand(comparison[1]!, source),
          op: comparison[2] as '==' | '!=',
          right: operand(comparison[3]!, source),
        }
      }
      const not = text.startsWith('!')
      if (not) text = text.slice(1)
      const left = operand(text, source)
      if (!('ref' in left)) throw new Error(`expected a reference in ${JSON.stringify(source)}`)
      return { not, left }
    }),
  )
}

/** What the references resolve against. */
export interface ExpressionScope {
  context: ReadonlyMap<string, unknown>
  testKit: Record<string, unknown>
}

function value(operand: Operand, scope: ExpressionScope): unknown {
  if ('literal' in operand) return operand.literal
  const [root, ...rest] = operand.ref.split('.')
  if (root === 'context') {
    const [name, ...more] = rest
    const captured = scope.context.get(name!)
    return more.length ? resolvePath(captured, more.join('.')) : captured
  }
  return resolvePath(scope.testKit, rest.join('.'))
}

/**
 * Evaluates a parsed expression.
 * @example evaluateExpression(parseExpression('!test_kit.x'), { context: new Map(), testKit: {} }) // true
 */
export function evaluateExpression(expression: Expression, scope: ExpressionScope): boolean {
  return expression.some((conjunction) =>
    conjunction.every((term) => {
      const left = value(term.left, scope)
      if (!term.op) return term.not ? !left : Boolean(left)
      const equal = left === value(term.right!, scope)
      return term.op === '==' ? equal : !equal
    }),
  )
}
