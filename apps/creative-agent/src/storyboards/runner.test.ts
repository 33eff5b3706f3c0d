/** The storyboard runner's own parts: paths, placeholders, check kinds, and a step run over a fake caller. */
import { describe, expect, it } from 'vitest'
import { runCheck, UnsupportedCheck, type CheckInput } from './checks.js'
import { resolveAll, resolvePath } from './path.js'
import { StoryboardRun } from './runner.js'
import { substitute, UnresolvedSubstitution, type SubstitutionScope } from './substitute.js'
import type { TaskCaller } from './transport.js'
import type { Storyboard, Validation } from './types.js'

const body = {
  status: 'completed',
  formats: [{ format_id: { agent_url: 'https://a.example', id: 'x' } }, { format_id: { id: 'y' } }],
  specialisms: ['creative-template'],
  context: { correlation_id: 'c1' },
  pagination: { has_more: false, cursor: null },
}
const check = (validation: Validation, input: Partial<CheckInput> = {}) =>
  runCheck(validation, { body, responseSchemaRef: undefined, context: new Map(), ...input })

describe('paths', () => {
  it('resolves keys, indexes and wildcards', () => {
    expect(resolvePath(body, 'formats[0].format_id.id')).toBe('x')
    expect(resolvePath(body, 'formats[5].format_id')).toBeUndefined()
    expect(resolveAll(body, 'formats[*].format_id.id')).toEqual(['x', 'y'])
    expect(resolvePath(body, '')).toBe(body)
  })

  it('rejects malformed paths and wildcards where one value is expected', () => {
    expect(() => resolvePath(body, 'formats..id')).toThrow(/malformed/)
    expect(() => resolvePath(body, 'formats.')).toThrow(/malformed/)
    expect(() => resolvePath(body, 'formats[*]')).toThrow(/wildcard/)
  })
})

describe('placeholders', () => {
  const scope = (): SubstitutionScope => ({
    agentUrl: 'http://127.0.0.1:1',
    context: new Map<string, unknown>([['fid', { agent_url: 'u', id: 'i' }]]),
    generated: new Map(),
    responses: new Map([['first', { pagination: { cursor: 'c2' } }]]),
  })

  it('mints one UUID per alias, injects captures typed, and points "your agent" URLs at the agent', () => {
    const s = scope()
    const out = substitute(
      {
        a: '$generate:uuid_v4#k',
        b: '$generate:uuid_v4#k',
        c: '$generate:uuid_v4#other',
        ids: ['$context.fid'],
        target: { agent_url: 'https://your-agent.example.com', id: 'x' },
        asset: 'https://your-agent.example.com/generated/1.jpg',
        cursor: '{{prior_step.first.pagination.cursor}}',
      },
      s,
    )
    expect(out.a).toMatch(/^[0-9a-f-]{36}$/)
    expect(out.b).toBe(out.a)
    expect(out.c).not.toBe(out.a)
    expect(out.ids).toEqual([{ agent_url: 'u', id: 'i' }])
    expect(out.target.agent_url).toBe('http://127.0.0.1:1')
    expect(out.asset).toBe('https://your-agent.example.com/generated/1.jpg')
    expect(out.cursor).toBe('c2')
  })

  it('never lets an unresolved token through', () => {
    expect(() => substitute({ x: '$context.missing' }, scope())).toThrow(UnresolvedSubstitution)
    expect(() => substitute({ x: '{{runner.webhook_url:step}}' }, scope())).toThrow(UnresolvedSubstitution)
    expect(() => substitute({ x: '{{prior_step.nope.id}}' }, scope())).toThrow(UnresolvedSubstitution)
  })
})

describe('check kinds', () => {
  it('grades presence, absence, values and membership', () => {
    expect(check({ check: 'field_present', path: 'formats[0].format_id.agent_url' }).passed).toBe(true)
    expect(check({ check: 'field_present', path: 'formats[1].format_id.agent_url' }).passed).toBe(false)
    expect(check({ check: 'field_absent', path: 'pagination.cursor' }).passed).toBe(true)
    expect(check({ check: 'field_absent', path: 'context' }).passed).toBe(false)
    expect(check({ check: 'field_value', path: 'context', value: { correlation_id: 'c1' } }).passed).toBe(
      true,
    )
    expect(check({ check: 'field_value', path: 'context.correlation_id', value: 'c2' }).passed).toBe(false)
    expect(check({ check: 'field_value_or_absent', path: 'nope', value: 1 }).passed).toBe(true)
    expect(
      check({ check: 'field_value_or_absent', path: 'pagination.cursor', allowed_values: [null] }).passed,
    ).toBe(true)
    expect(check({ check: 'field_value_or_absent', path: 'pagination.has_more', value: true }).passed).toBe(
      false,
    )
    expect(
      check({ check: 'field_contains', path: 'specialisms[*]', value: 'creative-template' }).passed,
    ).toBe(true)
    expect(check({ check: 'field_contains', path: 'specialisms', value: 'creative-generative' }).passed).toBe(
      false,
    )
    expect(check({ check: 'field_contains', path: 'formats[*].format_id', value: { id: 'y' } }).passed).toBe(
      true,
    )
    expect(check({ check: 'field_pattern', path: 'context.correlation_id', pattern: '^c\\d$' }).passed).toBe(
      true,
    )
  })

  it('reads the error code from adcp_error or errors[0]', () => {
    const envelope = { adcp_error: { code: 'FORMAT_NOT_SUPPORTED', message: 'm' } }
    const payload = { errors: [{ code: 'INVALID_REQUEST', message: 'm' }] }
    expect(check({ check: 'error_code', value: 'FORMAT_NOT_SUPPORTED' }, { body: envelope }).passed).toBe(
      true,
    )
    expect(
      check({ check: 'error_code', allowed_values: ['INVALID_REQUEST'] }, { body: payload }).passed,
    ).toBe(true)
    expect(check({ check: 'error_code' }, { body }).passed).toBe(false)
  })

  it('compares with values captured earlier, passing with an observation when the capture is absent', () => {
    const context = new Map<string, unknown>([['id', 'x']])
    expect(
      check(
        { check: 'field_equals_context', path: 'formats[0].format_id.id', context_key: 'id' },
        { context },
      ).passed,
    ).toBe(true)
    expect(
      check(
        { check: 'field_equals_context', path: 'formats[1].format_id.id', context_key: 'id' },
        { context },
      ).passed,
    ).toBe(false)
    expect(check({ check: 'field_equals_context', path: 'x', context_key: 'gone' }).detail).toMatch(
      /context_key_absent/,
    )
  })

  it('validates response_schema with the official schemas', () => {
    const input = { responseSchemaRef: 'protocol/get-adcp-capabilities-response.json' }
    expect(check({ check: 'response_schema' }, { ...input, body: { status: 'completed' } }).passed).toBe(
      false,
    )
    const valid = {
      status: 'completed',
      adcp: { major_versions: [3], idempotency: { supported: false } },
      supported_protocols: ['creative'],
    }
    expect(check({ check: 'response_schema' }, { ...input, body: valid })).toMatchObject({ passed: true })
  })

  it('fails loudly on a kind it does not implement', () => {
    expect(() => check({ check: 'upstream_traffic' })).toThrow(UnsupportedCheck)
    expect(() => check({ check: 'cross_response_field_equal', path: 'x' })).toThrow(UnsupportedCheck)
  })
})

describe('a step run', () => {
  const storyboard: Storyboard = {
    id: 'sb',
    phases: [
      {
        id: 'p',
        steps: [
          {
            id: 'first',
            task: 'list_creative_formats',
            sample_request: { context: { correlation_id: 'sb--first' } },
            context_outputs: [{ name: 'cursor', path: 'pagination.cursor' }],
            validations: [{ check: 'field_value', path: 'context.correlation_id', value: 'sb--first' }],
          },
          {
            id: 'second',
            task: 'list_creative_formats',
            sample_request: { pagination: { cursor: '$context.cursor' } },
            validations: [{ check: 'upstream_traffic' }],
          },
        ],
      },
    ],
  }
  const caller = (answer: Record<string, unknown>): TaskCaller => ({
    transport: 'mcp',
    call: async (_task, args) => ({
      transport: 'mcp',
      body: { ...answer, ...(args.context ? { context: args.context } : {}) },
      transportError: false,
      raw: undefined,
    }),
    tasks: async () => [],
    close: async () => {},
  })

  it('captures context outputs, and fails the capture when the path has no value', async () => {
    const run = new StoryboardRun(
      storyboard,
      caller({ pagination: { has_more: true, cursor: 'c2' } }),
      'http://a',
    )
    expect((await run.runStep('p', 'first')).failures).toEqual([])
    expect(run.scope.context.get('cursor')).toBe('c2')
    const empty = new StoryboardRun(storyboard, caller({ pagination: { has_more: false } }), 'http://a')
    const outcome = await empty.runStep('p', 'first')
    expect(outcome.failures.map((failure) => failure.check)).toEqual(['capture_path_not_resolvable'])
    await expect(empty.runStep('p', 'second')).rejects.toThrow(UnresolvedSubstitution)
  })

  it('throws on an unsupported check kind instead of passing the step', async () => {
    const run = new StoryboardRun(
      storyboard,
      caller({ pagination: { has_more: true, cursor: 'c2' } }),
      'http://a',
    )
    await run.runStep('p', 'first')
    await expect(run.runStep('p', 'second')).rejects.toThrow(UnsupportedCheck)
  })
})
